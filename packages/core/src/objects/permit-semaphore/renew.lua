--[[
renew: extend the leases of a batch of permits on one server and hash slot.
Lapsed permits are reclaimed first, so a permit whose lease ended is found
gone, never revived.

KEYS[3i-2]  permits: of permit i's semaphore, <prefix>:{<name>} (string)
KEYS[3i-1]  leases: its leases <prefix>:{<name>}:leases (sorted set: id -> lease end, ms)
KEYS[3i]    holders: its holders <prefix>:{<name>}:holders (hash: id -> token)
ARGV[1]     sharded: '1' announces with SPUBLISH (Cluster), '0' with PUBLISH
ARGV[4i-2]  id: the id of permit i
ARGV[4i-1]  token: its fencing token (decimal string)
ARGV[4i]    leaseMs: its lease, ms: the lease end becomes max(current, now + leaseMs)
ARGV[4i+1]  channel: its semaphore's channel <prefix>:{<name>}:permits (keys.ts)

Returns one integer per permit, in order:
   1  renewed
   0  gone: lapsed (reclaimed) or released
  -1  taken: the id is held with another token

Publishes '<reclaimed>:<available>' on the `channel` of a semaphore where it
reclaimed permits and some are available.
]]
--- @include "announce"
--- @include "reclaim-permits"

local results = {}
for i = 1, #KEYS / 3 do
  local permits, leases, holders = KEYS[3 * i - 2], KEYS[3 * i - 1], KEYS[3 * i]
  local id, token, leaseMs, channel = ARGV[4 * i - 2], ARGV[4 * i - 1], tonumber(ARGV[4 * i]), ARGV[4 * i + 1]
  local nowMs, reclaimed = reclaimPermits(permits, leases, holders)
  if reclaimed > 0 then
    local available = tonumber(redis.call('GET', permits) or '0')
    if available > 0 then
      announce(channel, reclaimed .. ':' .. available, ARGV[1])
    end
  end
  local held = redis.call('HGET', holders, id)
  if not held then
    results[i] = 0
  elseif held ~= token then
    results[i] = -1
  else
    redis.call('ZADD', leases, 'XX', 'GT', nowMs + leaseMs, id)
    results[i] = 1
  end
end
return results

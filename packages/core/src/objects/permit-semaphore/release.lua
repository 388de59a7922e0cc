--[[
release: give permit `id` back, after reclaiming lapsed permits (so a
permit whose lease ended is found gone).

KEYS[1]  permits: <prefix>:{<name>} (string)
KEYS[2]  leases: <prefix>:{<name>}:leases (sorted set: id -> lease end, ms)
KEYS[3]  holders: <prefix>:{<name>}:holders (hash: id -> token)
KEYS[4]  marker: marker of the permit <prefix>:{<name>}:permit:<id> (string
         'released:<op>'), so a replay of this release answers "released"
ARGV[1]  id: the permit's id
ARGV[2]  token: release only with this fencing token; '' any
ARGV[3]  op: <clientId>:<op>, the id of this release
ARGV[4]  replayWindowMs: how long the marker lives, integer ms
ARGV[5]  sharded: '1' announces with SPUBLISH (Cluster), '0' with PUBLISH
ARGV[6]  channel: the semaphore's channel <prefix>:{<name>}:permits (keys.ts)

Returns
  {1, receivers}  released; receivers: subscriber connections the announcement
                  reached. A replay of the op answers {1, 0} and changes nothing.
  {-1, exists}    not held (lapsed, released by another op, unknown): nothing
                  changed; exists is 1 when the id is held with another token

Publishes '<came back>:<available>' on `channel` when permits came back and
some are available.
]]
--- @include "announce"
--- @include "reclaim-permits"

local _, reclaimed = reclaimPermits(KEYS[1], KEYS[2], KEYS[3])
local held = redis.call('HGET', KEYS[3], ARGV[1])
local released = held and (ARGV[2] == '' or held == ARGV[2])
if released then
  redis.call('HDEL', KEYS[3], ARGV[1])
  redis.call('ZREM', KEYS[2], ARGV[1])
  redis.call('INCR', KEYS[1])
  redis.call('SET', KEYS[4], 'released:' .. ARGV[3], 'PX', ARGV[4])
end
local receivers = 0
if released or reclaimed > 0 then
  local available = tonumber(redis.call('GET', KEYS[1]) or '0')
  if available > 0 then
    receivers = announce(ARGV[6], ((released and 1 or 0) + reclaimed) .. ':' .. available, ARGV[5])
  end
end
if released then
  return {1, receivers}
end
if redis.call('GET', KEYS[4]) == 'released:' .. ARGV[3] then
  return {1, 0}
end
if held then
  return {-1, 1}
end
return {-1, 0}

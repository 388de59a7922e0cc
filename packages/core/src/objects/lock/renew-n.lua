--[[
renew-n: extend the leases of a batch of holds on one server and hash slot.

KEYS[i]     key: lock key of hold i, <prefix>:{<name>} (hold-record)
ARGV[3i-2]  owner: the owner of hold i
ARGV[3i-1]  token: its fencing token (decimal string)
ARGV[3i]    leaseMs: its lease, ms; the TTL becomes max(current, leaseMs)

Returns one integer per hold, in order:
   1  renewed
   0  gone: the key does not exist (never recreated here)
  -1  taken: the key exists with another owner or another token

Publishes nothing.
]]
--- @include "hold-record"

local results = {}
for i = 1, #KEYS do
  local key = KEYS[i]
  local owner, token, leaseMs = ARGV[3 * i - 2], ARGV[3 * i - 1], ARGV[3 * i]
  local held = readHold(key)
  if not held then
    results[i] = 0
  elseif held.owner ~= owner or held.token ~= token then
    results[i] = -1
  else
    if redis.call('PTTL', key) < tonumber(leaseMs) then
      redis.call('PEXPIRE', key, leaseMs)
    end
    results[i] = 1
  end
end
return results

--[[
renew-n: extend the leases of a batch of holds on one server and hash slot.

KEYS[i]          lock hash of hold i, <prefix>:{<name>}
ARGV[3i-2]       owner of hold i
ARGV[3i-1]       token of hold i (decimal string)
ARGV[3i]         leaseMs of hold i; the TTL becomes max(current, leaseMs)

Returns one integer per hold, in order:
   1  renewed
   0  gone: the key does not exist (never recreated here)
  -1  taken: the key exists with another owner or another token

Publishes nothing.
]]
local results = {}
for i = 1, #KEYS do
  local held = redis.call('HMGET', KEYS[i], 'owner', 'token')
  local base = (i - 1) * 3
  if not held[1] then
    results[i] = 0
  elseif held[1] ~= ARGV[base + 1] or held[2] ~= ARGV[base + 2] then
    results[i] = -1
  else
    if redis.call('PTTL', KEYS[i]) < tonumber(ARGV[base + 3]) then
      redis.call('PEXPIRE', KEYS[i], ARGV[base + 3])
    end
    results[i] = 1
  end
end
return results

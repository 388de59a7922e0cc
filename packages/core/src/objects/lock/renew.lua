--[[
renew: extend the leases of a batch of holds on one server and hash slot.

KEYS[i]     key: lock key of hold i, <prefix>:{<name>} (hash <owner> -> count, t token; hold-record)
ARGV[3i-2]  owner: the owner of hold i
ARGV[3i-1]  token: its fencing token (decimal string)
ARGV[3i]    leaseMs: its lease, ms; the TTL becomes max(current, leaseMs)

Returns one integer per hold, in order:
   1  renewed
   0  gone: the key does not exist (never recreated here)
  -1  taken: the key exists with another owner or another token, or holds no hold

Publishes nothing.
]]
local results = {}
for i = 1, #KEYS do
  local key = KEYS[i]
  local owner, token, leaseMs = ARGV[3 * i - 2], ARGV[3 * i - 1], ARGV[3 * i]
  -- pcall: a key of another type holds no hold of this owner (taken), and fails no other hold's renewal.
  local held = redis.pcall('HMGET', key, owner, 't')
  if held.err then
    results[i] = -1
  elseif held[1] and held[2] == token then
    if redis.call('PTTL', key) < tonumber(leaseMs) then
      redis.call('PEXPIRE', key, leaseMs)
    end
    results[i] = 1
  elseif redis.call('EXISTS', key) == 0 then
    results[i] = 0
  else
    results[i] = -1
  end
end
return results

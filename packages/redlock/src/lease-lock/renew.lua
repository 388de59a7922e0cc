--[[
renew: extend the leases of a batch of lease locks on one server.

KEYS[i]     lock: string of hold i, <prefix>:{<name>}: <owner>|<op>
ARGV[2i-1]  holder: of hold i, <owner>|<op of the acquire that took it>
ARGV[2i]    leaseMs: its lease, ms; the TTL becomes max(current, leaseMs)

Returns one integer per hold, in order:
   1  renewed
   0  gone: the key does not exist (never recreated here)
  -1  taken: the key holds another owner or op

Publishes nothing.
]]
local results = {}
for i = 1, #KEYS do
  local held = redis.call('GET', KEYS[i])
  if not held then
    results[i] = 0
  elseif held ~= ARGV[2 * i - 1] then
    results[i] = -1
  else
    if redis.call('PTTL', KEYS[i]) < tonumber(ARGV[2 * i]) then
      redis.call('PEXPIRE', KEYS[i], ARGV[2 * i])
    end
    results[i] = 1
  end
end
return results

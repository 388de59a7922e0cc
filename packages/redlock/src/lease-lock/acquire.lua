--[[
acquire: take a lease lock for one owner's operation, unless it is held.

A lease lock is one string key whose value names its holder and the operation
that took it; it counts nothing (a Redlock client counts reentrancy itself).

KEYS[1]  lock: string <prefix>:{<name>}: <owner>|<op> of the acquire that holds it
KEYS[2]  cancelled: tombstones <prefix>:{<name>}:cancelled (hash; field <owner>|<op>), left
         by cancel.lua for an op it cancelled, in case the op arrives after it
ARGV[1]  holder: <owner>|<op> of this call (owner <clientId>:<taskId>)
ARGV[2]  leaseMs: the key's TTL, integer ms > 0

Returns
  1             granted (the token is the op, which the caller knows); also
                for a replay of the op that holds the lock (ioredis resends
                after a reconnect), which changes nothing
  -1            this op was cancelled before it arrived: nothing changed
  {pttl, held}  held by another: its remaining TTL in ms (-1: none) and its
                value <owner>|<op> (Redlock tells a split vote from it)

Publishes nothing.
]]
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then
  return -1
end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return 1
end
local held = redis.call('GET', KEYS[1])
if held == ARGV[1] then
  return 1
end
return {redis.call('PTTL', KEYS[1]), held}

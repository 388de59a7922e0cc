--[[
forceUnlock-5: release the fair lock whoever holds it (admin), and hand it to
the queue head.

KEYS[1]  lock: hash <prefix>:{<name>}
KEYS[2]  fence: fencing counter of the lock's hash slot <prefix>:{<slot tag>}:fence
KEYS[3]  queue: waiter queue <prefix>:{<name>}:queue (list of owners; kept: they still wait)
KEYS[4]  waiters: waiter leases <prefix>:{<name>}:waiters (zset owner -> lease end, ms)
KEYS[5]  tickets: waiter tickets <prefix>:{<name>}:tickets (hash owner -> "<op> <leaseMs>")
ARGV[1]  sharded: '1' announces with SPUBLISH (Cluster), '0' with PUBLISH

Returns 1 if a holder was released, 0 if the lock was free.

Publishes "<head> <token> <ticket op>" on <prefix>:{<name>}:release:<clientId
of the head> when it released a holder and someone is queued (grant-head).
]]
--- @include "mint-token"
--- @include "fair-queue"
--- @include "announce"
--- @include "grant-head"

if redis.call('DEL', KEYS[1]) == 0 then
  return 0
end
grantNext(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], ARGV[1])
return 1

--[[
forceUnlock-3: release the fair lock whoever holds it (admin), and hand it to
the queue head.

KEYS[1]  lock hash <prefix>:{<name>}
KEYS[2]  waiter queue <prefix>:{<name>}:queue (list of owners; kept: they still wait)
KEYS[3]  waiter leases <prefix>:{<name>}:waiters (zset owner -> lease end, ms)
ARGV[1]  sharded: '1' announces with SPUBLISH (Cluster), '0' with PUBLISH

Returns 1 if a holder was released, 0 if the lock was free.

Publishes the queue head's owner id on <prefix>:{<name>}:release:<clientId of
the head> when it released a holder and someone is queued.
]]
--- @include "fair-queue"
--- @include "announce"
--- @include "announce-head"

if redis.call('DEL', KEYS[1]) == 0 then
  return 0
end
local head = purgeWaiters(KEYS[2], KEYS[3], nowMs())
if head then
  announceHead(KEYS[1], head, ARGV[1])
end
return 1

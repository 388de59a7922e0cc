--[[
forceUnlock-3: release every holder of a read-write lock (admin), and wake waiters.

KEYS[1]  hash <prefix>:{<name>}
KEYS[2]  reader leases <prefix>:{<name>}:readers (zset)
KEYS[3]  waiting writers <prefix>:{<name>}:writers (zset; kept: they still wait)
ARGV[1]  sharded: '1' announces with SPUBLISH (Cluster), '0' with PUBLISH

Returns 1 if a holder was released, 0 if the lock was free.

Publishes 'force' on <prefix>:{<name>}:release when it released a holder.
]]
--- @include "announce"

if redis.call('DEL', KEYS[1], KEYS[2]) == 0 then
  return 0
end
announce(KEYS[1] .. ':release', 'force', ARGV[1])
return 1

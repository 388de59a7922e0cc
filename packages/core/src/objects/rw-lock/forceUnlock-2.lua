--[[
forceUnlock-2: release every holder of a read-write lock (admin), and wake waiters.

KEYS[1]  hash: <prefix>:{<name>}
KEYS[2]  readers: reader leases <prefix>:{<name>}:readers (zset)
ARGV[1]  sharded: '1' announces with SPUBLISH (Cluster), '0' with PUBLISH

Returns 1 if a holder was released, 0 if the lock was free. Waiting writers
(<prefix>:{<name>}:writers) are kept: they still wait.

Publishes 'force' on <prefix>:{<name>}:release when it released a holder.
]]
--- @include "announce"

if redis.call('DEL', KEYS[1], KEYS[2]) == 0 then
  return 0
end
announce(KEYS[1] .. ':release', 'force', ARGV[1])
return 1

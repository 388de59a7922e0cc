--[[
forceUnlock-1: release the lock whoever holds it (admin), and wake waiters.

KEYS[1]  lock: hash <prefix>:{<name>}
ARGV[1]  sharded: '1' announces with SPUBLISH (Cluster), '0' with PUBLISH

Returns 1 if a holder was released, 0 if the lock was free.

Publishes 'force' on <prefix>:{<name>}:release when it released a holder.
]]
--- @include "announce"

if redis.call('DEL', KEYS[1]) == 0 then
  return 0
end
announce(KEYS[1] .. ':release', 'force', ARGV[1])
return 1

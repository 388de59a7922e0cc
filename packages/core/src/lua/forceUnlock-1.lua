--[[
forceUnlock-1: release the lock whoever holds it (admin), and wake waiters.

KEYS[1]  lock hash <prefix>:{<name>}
ARGV[1]  channel to announce the release on: <prefix>:{<name>}:release
ARGV[2]  publish command: 'PUBLISH' (standalone) or 'SPUBLISH' (Cluster)

Returns 1 if a holder was released, 0 if the lock was free.
]]
if redis.call('DEL', KEYS[1]) == 1 then
  redis.call(ARGV[2], ARGV[1], 'force')
  return 1
end
return 0

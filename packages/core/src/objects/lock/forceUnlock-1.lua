--[[
forceUnlock-1: release the lock whoever holds it (admin), and wake waiters.

KEYS[1]  lock hash <prefix>:{<name>}
ARGV[1]  sharded: '1' announces with SPUBLISH (Cluster), '0' with PUBLISH

Returns 1 if a holder was released, 0 if the lock was free.

Publishes 'force' on <prefix>:{<name>}:release when it released a holder.
]]
if redis.call('DEL', KEYS[1]) == 0 then
  return 0
end
local channel = KEYS[1] .. ':release'
if ARGV[1] == '1' then
  redis.call('SPUBLISH', channel, 'force')
else
  redis.call('PUBLISH', channel, 'force')
end
return 1

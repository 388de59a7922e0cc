--[[
forceUnlock-1: release the lock whoever holds it (admin), wake waiters, and
tell the holder.

KEYS[1]  lock: hash <prefix>:{<name>}; fields owner, count, token, op
ARGV[1]  sharded: '1' announces with SPUBLISH (Cluster), '0' with PUBLISH
ARGV[2]  channel: the lock's release channel <prefix>:{<name>}:release
ARGV[3]  notices: <prefix>:client: (a holder's notice channel is this plus its
         client id), or '' to tell no holder (a key that is not a hash)

Returns 1 if a holder was released, 0 if the lock was free.

Publishes 'force' on ARGV[2] when it released a holder, and
"forced <owner> <token> <lock>" on ARGV[3] .. <clientId of the owner> (PUBLISH,
see force-notice).
]]
--- @include "announce"
--- @include "force-notice"

local held = {}
if ARGV[3] ~= '' then
  held = redis.call('HMGET', KEYS[1], 'owner', 'token')
end
if redis.call('DEL', KEYS[1]) == 0 then
  return 0
end
announce(ARGV[2], 'force', ARGV[1])
noticeForced(ARGV[3], KEYS[1], held[1], held[2])
return 1

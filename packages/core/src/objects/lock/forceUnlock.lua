--[[
forceUnlock: release the lock whoever holds it (admin), wake waiters, tell the holder.

KEYS[1]  lock: lock <prefix>:{<name>}: a hold (hash, hold-record), or a Redlock master's lease lock (string)
ARGV[1]  sharded: '1' announces with SPUBLISH (Cluster), '0' with PUBLISH
ARGV[2]  channel: the lock's release channel <prefix>:{<name>}:release
ARGV[3]  notices: <prefix>:client: (plus a client id: its notice channel), or '' to tell no
         holder (a key that holds no hold record)

Returns 1 if a holder was released, 0 if the lock was free.

Publishes 'force' on `channel` when it released a holder, and "forced <owner> <token> <lock>"
on `notices` .. <owner's clientId> (force-notice).
]]
--- @include "announce"
--- @include "force-notice"
--- @include "hold-record"

local held = {}
if ARGV[3] ~= '' then
  held = readHold(KEYS[1]) or {}
end
if redis.call('DEL', KEYS[1]) == 0 then
  return 0
end
announce(ARGV[2], 'force', ARGV[1])
noticeForced(ARGV[3], KEYS[1], held.owner, held.token)
return 1

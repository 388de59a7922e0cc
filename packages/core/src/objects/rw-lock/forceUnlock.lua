--[[
forceUnlock: release every holder (admin), wake waiters, and tell each holder.

KEYS[1]  hash: <prefix>:{<name>}; mode, writer w/wt, per reader r:<owner> and rt:<owner> (see rw-state)
KEYS[2]  readers: reader leases <prefix>:{<name>}:readers (zset)
ARGV[1]  sharded: '1' announces with SPUBLISH (Cluster), '0' with PUBLISH
ARGV[2]  channel: the lock's release channel <prefix>:{<name>}:release
ARGV[3]  notices: <prefix>:client: (a holder's notice channel is this plus its
         client id)

Returns 1 if a holder was released, 0 if the lock was free. Waiting writers
(<prefix>:{<name>}:writers) are kept: they still wait.

Publishes 'force' on ARGV[2] when it released a holder, and
"forced <owner> <token> <hash>" on ARGV[3] .. <clientId of the owner> for the
writer and for each reader (PUBLISH, see force-notice).
]]
--- @include "announce"
--- @include "force-notice"

local writer = redis.call('HMGET', KEYS[1], 'w', 'wt')
local readers = redis.call('ZRANGE', KEYS[2], 0, -1)
local readerTokens = {}
for i, owner in ipairs(readers) do
  readerTokens[i] = redis.call('HGET', KEYS[1], 'rt:' .. owner)
end
if redis.call('DEL', KEYS[1], KEYS[2]) == 0 then
  return 0
end
announce(ARGV[2], 'force', ARGV[1])
noticeForced(ARGV[3], KEYS[1], writer[1], writer[2])
for i, owner in ipairs(readers) do
  noticeForced(ARGV[3], KEYS[1], owner, readerTokens[i] or nil)
end
return 1

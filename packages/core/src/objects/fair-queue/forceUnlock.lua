--[[
forceUnlock: release the fair lock whoever holds it (admin), hand it to the head, tell the holder.

KEYS[1]  lock: hold <prefix>:{<name>} (hash <owner> -> count, t, o; hold-record)
KEYS[2]  fence: fencing counter of the lock's hash slot <prefix>:{<slot tag>}:fence
KEYS[3]  queue: waiter queue <prefix>:{<name>}:queue (list of owners; kept: they still wait)
KEYS[4]  waiters: waiter leases <prefix>:{<name>}:waiters (zset owner -> lease end, ms)
KEYS[5]  tickets: waiter tickets <prefix>:{<name>}:tickets (hash owner -> "<op> <leaseMs>")
ARGV[1]  sharded: '1' announces with SPUBLISH (Cluster), '0' with PUBLISH
ARGV[2]  notices: <prefix>:client: (plus a client id: its notice channel)
ARGV[3]  wakePrefix: <prefix>:{<name>}:release: (plus a client id: its wake channel)

Returns 1 if a holder was released, 0 if the lock was free.

Publishes "forced <owner> <token> <lock>" to the holder's client (force-notice), then
"<head> <token> <ticket op>" to the head's client when someone is queued (grant-head).
]]
--- @include "mint-token"
--- @include "fair-queue"
--- @include "announce"
--- @include "grant-head"
--- @include "force-notice"
--- @include "hold-record"

local held = readHold(KEYS[1])
if not held then
  return 0
end
redis.call('DEL', KEYS[1])
noticeForced(ARGV[2], KEYS[1], held.owner, held.token)
grantNext(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], ARGV[1], ARGV[3])
return 1

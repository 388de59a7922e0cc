--[[
forceUnlock-5: release the fair lock whoever holds it (admin), hand it to
the queue head, and tell the holder.

KEYS[1]  lock: hold <prefix>:{<name>} (string "<head> <token> <owner>", hold-record)
KEYS[2]  fence: fencing counter of the lock's hash slot <prefix>:{<slot tag>}:fence
KEYS[3]  queue: waiter queue <prefix>:{<name>}:queue (list of owners; kept: they still wait)
KEYS[4]  waiters: waiter leases <prefix>:{<name>}:waiters (zset owner -> lease end, ms)
KEYS[5]  tickets: waiter tickets <prefix>:{<name>}:tickets (hash owner -> "<op> <leaseMs>")
ARGV[1]  sharded: '1' announces with SPUBLISH (Cluster), '0' with PUBLISH
ARGV[2]  notices: <prefix>:client: (a holder's notice channel is this plus its
         client id)
ARGV[3]  wakePrefix: <prefix>:{<name>}:release: (a waiter's wake channel is this
         plus its client id)

Returns 1 if a holder was released, 0 if the lock was free.

Publishes "forced <owner> <token> <lock>" on ARGV[2] .. <clientId of the
owner> (PUBLISH, see force-notice) when it released a holder, then
"<head> <token> <ticket op>" on ARGV[3] .. <clientId of the head> when
someone is queued (grant-head).
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

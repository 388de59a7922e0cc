--[[
cancel: undo an acquire of the fair lock as lock/cancel.lua does the lock's, and hand a lock it
frees to the queue head.

KEYS[1]  lock: hold <prefix>:{<name>} (hash <owner> -> count, t, o; hold-record)
KEYS[2]  released: last full release <prefix>:{<name>}:released (string: <owner>:<op>)
KEYS[3]  cancelled: tombstones <prefix>:{<name>}:cancelled (hash; field <owner>:<acquire op>)
KEYS[4]  fence: fencing counter of the lock's hash slot <prefix>:{<slot tag>}:fence
KEYS[5]  queue: waiter queue <prefix>:{<name>}:queue (list of owners)
KEYS[6]  waiters: waiter leases <prefix>:{<name>}:waiters (zset owner -> lease end, ms)
KEYS[7]  tickets: waiter tickets <prefix>:{<name>}:tickets (hash owner -> "<op> <leaseMs>")
ARGV[1]  owner: <clientId>:<taskId>
ARGV[2]  op: operation id of this cancel
ARGV[3]  acquireOp: the op of the acquire to undo
ARGV[4]  all: '1' releases every count of the owner, '0' one count
ARGV[5]  replayWindowMs: how long `released` and `cancelled` live after this call, ms
ARGV[6]  sharded: '1' announces with SPUBLISH (Cluster), '0' with PUBLISH
ARGV[7]  wakePrefix: <prefix>:{<name>}:release: (plus the head's clientId: its wake channel)

Returns
  1  the acquire had run and is undone
  0  it had not run (or is not the hold's last op): the tombstone refuses it

Publishes "<head> <token> <ticket op>" to the head's client when the undo frees the lock and
someone is queued (grant-head).
]]
--- @include "mint-token"
--- @include "fair-queue"
--- @include "announce"
--- @include "grant-head"
--- @include "cancel-count"

local lock, released, cancelled, fence, queue, waiters, tickets = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local owner, op, acquireOp, all, replayWindowMs, sharded, wakePrefix = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7]
local undone, freed = cancelCount(lock, released, cancelled, owner, op, acquireOp, all, replayWindowMs)
if freed then
  grantNext(lock, fence, queue, waiters, tickets, sharded, wakePrefix)
end
return undone

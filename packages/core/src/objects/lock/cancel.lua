--[[
cancel: undo an acquire whose reply came too late, was aborted, or never came.

It may have run, be on its way (resent after a reconnect) or never arrive, and must leave no
hold: if it ran as the hold's last op its count is released; else a tombstone refuses it.

KEYS[1]  lock: hold <prefix>:{<name>} (hash <owner> -> count, t, o, n; hold-record)
KEYS[2]  released: last full release <prefix>:{<name>}:released (string: <owner>:<op>)
KEYS[3]  cancelled: tombstones <prefix>:{<name>}:cancelled (hash; field <owner>:<acquire op>)
KEYS[4]  clients: waiting clients <prefix>:{<name>}:clients (zset; wake-client)
ARGV[1]  owner: <clientId>:<taskId>
ARGV[2]  op: operation id of this cancel
ARGV[3]  acquireOp: the op of the acquire to undo
ARGV[4]  all: '1' releases every count of the owner, '0' one count
ARGV[5]  replayWindowMs: how long `released` and `cancelled` live after this call, ms
ARGV[6]  sharded: '1' announces with SPUBLISH (Cluster), '0' with PUBLISH

Returns
  1  the acquire had run and is undone
  0  it had not run (or is not the hold's last op): the tombstone refuses it until the
     hash's TTL (renewed by each cancel) runs out

Publishes 'unlock' to one waiting client (wake-client: on <prefix>:{<name>}:release: followed by
its client id) when the undo frees the lock.
]]
--- @include "announce"
--- @include "wake-client"
--- @include "cancel-count"

local lock, released, cancelled, clients = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local owner, op, acquireOp, all, replayWindowMs, sharded = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local undone, freed = cancelCount(lock, released, cancelled, owner, op, acquireOp, all, replayWindowMs)
if freed then
  wakeClient(clients, lock, sharded)
end
return undone

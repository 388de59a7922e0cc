--[[
cancel-5: undo an acquire of the fair lock whose reply came too late, was
aborted, or never came (as cancel-3 of the lock), and hand a lock it frees to
the queue head.

KEYS[1]  lock hash <prefix>:{<name>}; fields owner, count, token, op
KEYS[2]  last full release <prefix>:{<name>}:released (string: <owner>:<op>)
KEYS[3]  tombstones <prefix>:{<name>}:cancelled (hash; field <owner>:<acquire op>)
KEYS[4]  waiter queue <prefix>:{<name>}:queue (list of owners)
KEYS[5]  waiter leases <prefix>:{<name>}:waiters (zset owner -> lease end, ms)
ARGV[1]  owner: <clientId>:<taskId>
ARGV[2]  op: operation id of this cancel
ARGV[3]  acquireOp: the op of the acquire to undo
ARGV[4]  all: '1' releases every count of the owner, '0' one count
ARGV[5]  replayWindowMs: how long KEYS[2] and KEYS[3] live after this call, ms
ARGV[6]  sharded: '1' announces with SPUBLISH (Cluster), '0' with PUBLISH

Returns
  1  the acquire had run and is undone
  0  it had not run (or is not the hold's last op): the tombstone refuses it

Publishes the queue head's owner id on <prefix>:{<name>}:release:<clientId of
the head> when the undo frees the lock and someone is queued.
]]
--- @include "fair-queue"
--- @include "announce"
--- @include "announce-head"
--- @include "cancel-count"

local undone, freed = cancelCount(KEYS[1], KEYS[2], KEYS[3])
if freed then
  local head = purgeWaiters(KEYS[4], KEYS[5], nowMs())
  if head then
    announceHead(KEYS[1], head, ARGV[6])
  end
end
return undone

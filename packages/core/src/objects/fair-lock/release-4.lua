--[[
release-4: release one hold (or all of an owner's holds) of the fair lock, and
hand it to the queue head.

KEYS[1]  lock hash <prefix>:{<name>}; fields owner, count, token, op
KEYS[2]  last full release <prefix>:{<name>}:released (string: <owner>:<op>)
KEYS[3]  waiter queue <prefix>:{<name>}:queue (list of owners)
KEYS[4]  waiter leases <prefix>:{<name>}:waiters (zset owner -> lease end, ms)
ARGV[1]  owner: <clientId>:<taskId>
ARGV[2]  op: operation id of this call
ARGV[3]  all: '1' releases every count of the owner, '0' one count
ARGV[4]  token: release only the hold with this fencing token; '' any
ARGV[5]  replayWindowMs: how long KEYS[2] remembers the last full release, ms
ARGV[6]  sharded: '1' announces with SPUBLISH (Cluster), '0' with PUBLISH

Returns (as release-2 of the lock)
  {1, remaining, receivers}  released; at 0 the key was deleted and the live
                             queue head's id published to its client
                             (receivers: subscriber connections that got it;
                             0 with nobody queued or on a replay)
  {-1, exists}               not held by this owner (with that token): nothing changed

Publishes the queue head's owner id on <prefix>:{<name>}:release:<clientId of
the head> when the count reaches 0 and someone is queued: only the head's
client hears it, and wakes only that waiter.
]]
--- @include "fair-queue"
--- @include "announce"
--- @include "announce-head"
--- @include "release-count"

local lock = KEYS[1]
local stays = releaseCount(lock, KEYS[2])
if stays then
  return stays
end
local head = purgeWaiters(KEYS[3], KEYS[4], nowMs())
if not head then
  return {1, 0, 0}
end
return {1, 0, announceHead(lock, head, ARGV[6])}

--[[
leaveQueue-3: a waiter gives up (timed out, aborted): out of the queue in one
step, and if it was the head of a free lock, the next head is told.

KEYS[1]  lock hash <prefix>:{<name>}
KEYS[2]  waiter queue <prefix>:{<name>}:queue (list of owners)
KEYS[3]  waiter leases <prefix>:{<name>}:waiters (zset owner -> lease end, ms)
ARGV[1]  owner: <clientId>:<taskId>
ARGV[2]  sharded: '1' announces with SPUBLISH (Cluster), '0' with PUBLISH

Returns 1 if it was queued, 0 if not.

Publishes the new head's owner id on <prefix>:{<name>}:release:<clientId of
the head> when the leaver was the head and the lock is free.
]]
--- @include "fair-queue"
--- @include "announce"
--- @include "announce-head"

local wasHead = redis.call('LINDEX', KEYS[2], 0) == ARGV[1]
local removed = redis.call('LREM', KEYS[2], 0, ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
if removed == 0 then
  return 0
end
if wasHead and redis.call('EXISTS', KEYS[1]) == 0 then
  local head = purgeWaiters(KEYS[2], KEYS[3], nowMs())
  if head then
    announceHead(KEYS[1], head, ARGV[2])
  end
end
return 1

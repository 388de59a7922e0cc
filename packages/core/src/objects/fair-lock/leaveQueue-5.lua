--[[
leaveQueue-5: a waiter gives up (timed out, aborted, failed): out of the queue
in one step. A grant a release made to it meanwhile, not yet claimed, is given
back; and a free lock whose head left goes to the next head.

KEYS[1]  lock: hold <prefix>:{<name>} (string "<head> <token> <owner>", hold-record)
KEYS[2]  fence: fencing counter of the lock's hash slot <prefix>:{<slot tag>}:fence
KEYS[3]  queue: waiter queue <prefix>:{<name>}:queue (list of owners)
KEYS[4]  waiters: waiter leases <prefix>:{<name>}:waiters (zset owner -> lease end, ms)
KEYS[5]  tickets: waiter tickets <prefix>:{<name>}:tickets (hash owner -> "<op> <leaseMs>")
ARGV[1]  owner: <clientId>:<taskId>
ARGV[2]  sharded: '1' announces with SPUBLISH (Cluster), '0' with PUBLISH
ARGV[3]  kept: the token of a hold of this owner that its client counts on
         ('' if none): a hand-off with that token is a branch's, not given back
ARGV[4]  wakePrefix: <prefix>:{<name>}:release: (keys.ts); the head's client
         listens on it followed by its clientId

Returns 1 if it was queued or held an unclaimed grant, 0 if neither.

Publishes "<head> <token> <ticket op>" on <wakePrefix><clientId of the head> when the lock is free after the leave and someone is queued
(grant-head).
]]
--- @include "mint-token"
--- @include "fair-queue"
--- @include "announce"
--- @include "grant-head"
--- @include "hold-record"

local held = readHold(KEYS[1]) or {}
local wasHead = redis.call('LINDEX', KEYS[3], 0) == ARGV[1]
local left = dequeue(KEYS[3], KEYS[4], KEYS[5], ARGV[1]) > 0
if held.owner == ARGV[1] and held.count == 0 and held.token ~= ARGV[3] then
  -- Granted while giving up: the grant was never claimed, nobody holds it.
  redis.call('DEL', KEYS[1])
  left = true
  wasHead = true
end
if not left then
  return 0
end
if wasHead and redis.call('EXISTS', KEYS[1]) == 0 then
  grantNext(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], ARGV[2], ARGV[4])
end
return 1

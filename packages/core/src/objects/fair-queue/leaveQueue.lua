--[[
leaveQueue: a waiter gives up: out of the queue, an unclaimed grant given back, and a free
lock whose head left handed to the next head.

KEYS[1]  lock: hold <prefix>:{<name>} (hash <owner> -> count, t, o; hold-record)
KEYS[2]  fence: fencing counter of the lock's hash slot <prefix>:{<slot tag>}:fence
KEYS[3]  queue: waiter queue <prefix>:{<name>}:queue (list of owners)
KEYS[4]  waiters: waiter leases <prefix>:{<name>}:waiters (zset owner -> lease end, ms)
KEYS[5]  tickets: waiter tickets <prefix>:{<name>}:tickets (hash owner -> "<op> <leaseMs>")
ARGV[1]  owner: <clientId>:<taskId>
ARGV[2]  sharded: '1' announces with SPUBLISH (Cluster), '0' with PUBLISH
ARGV[3]  kept: token of a hold of this owner its client counts on (a branch's: not given back), or ''
ARGV[4]  wakePrefix: <prefix>:{<name>}:release: (plus the head's clientId: its wake channel)

Returns 1 if it was queued or held an unclaimed grant, 0 if neither.

Publishes "<head> <token> <ticket op>" to the head's client when the lock is free after the
leave and someone is queued (grant-head).
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

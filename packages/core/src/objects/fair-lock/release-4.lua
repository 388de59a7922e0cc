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
                             queue head's id published (receivers: subscriber
                             connections that got it; 0 with nobody queued or
                             on a replay)
  {-1, exists}               not held by this owner (with that token): nothing changed

Publishes the queue head's owner id on <prefix>:{<name>}:release when the count
reaches 0 and someone is queued: only that waiter's process wakes it.
]]
--- @include "fair-queue"
--- @include "announce"

local lock = KEYS[1]
local held = redis.call('HMGET', lock, 'owner', 'count', 'op', 'token')

if held[1] ~= ARGV[1] or (ARGV[4] ~= '' and held[4] ~= ARGV[4]) then
  if redis.call('GET', KEYS[2]) == ARGV[1] .. ':' .. ARGV[2] then
    return {1, 0, 0}
  end
  if held[1] then
    return {-1, 1}
  end
  return {-1, 0}
end
if held[3] == ARGV[2] then
  return {1, tonumber(held[2]), 0}
end

local count = tonumber(held[2]) - 1
if count > 0 and ARGV[3] ~= '1' then
  redis.call('HSET', lock, 'count', count, 'op', ARGV[2])
  return {1, count, 0}
end

redis.call('DEL', lock)
redis.call('SET', KEYS[2], ARGV[1] .. ':' .. ARGV[2], 'PX', ARGV[5])
local head = purgeWaiters(KEYS[3], KEYS[4], nowMs())
if not head then
  return {1, 0, 0}
end
return {1, 0, announce(lock .. ':release', head, ARGV[6])}

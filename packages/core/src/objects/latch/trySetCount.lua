--[[
trySetCount: set the latch's count, only when it is zero (its key is absent:
reaching zero deletes it).

KEYS[1]  count: <prefix>:{<name>} (string: the remaining count; absent: zero)
KEYS[2]  marker: op marker <prefix>:{<name>}:op:<clientId>:<op> (string: '1' or '0',
         this op's outcome), so a replay answers its first outcome
KEYS[3]  kind: kind marker <prefix>:{<name>}:kind (string 'countDownLatch'), set with the
         count and deleted with it, so inspect names the kind
ARGV[1]  initialCount: the count to set, integer from 1 to 2^31-1
ARGV[2]  replayWindowMs: how long the marker lives, integer ms

Returns 1 when it set the count, 0 when the latch was counting already.

Publishes nothing (awaiters of a latch at zero have returned already).
]]
--- @include "set-once"

local done = redis.call('GET', KEYS[2])
if done then
  return tonumber(done)
end
local set = setOnce(KEYS[1], ARGV[1], KEYS[2], ARGV[2])
if set == 1 then
  redis.call('SET', KEYS[3], 'countDownLatch')
end
return set

--[[
countDown: count the latch down by one; at zero delete it and announce it once.

KEYS[1]  count: <prefix>:{<name>} (string: the remaining count; absent: zero)
KEYS[2]  marker: op marker <prefix>:{<name>}:op:<clientId>:<op> (string: the count this
         op left), so a replay does not count down twice
KEYS[3]  kind: kind marker <prefix>:{<name>}:kind (string 'countDownLatch'), set with the
         count and deleted with it, so inspect names the kind
ARGV[1]  replayWindowMs: how long the marker lives, integer ms
ARGV[2]  sharded: '1' announces with SPUBLISH (Cluster), '0' with PUBLISH
ARGV[3]  channel: the latch's channel <prefix>:{<name>}:zero (keys.ts)

Returns the count left (0 also when it was zero already: nothing changed). A
replay answers what the first call left and changes nothing.

Publishes 'zero' on `channel` from the call that takes the count from 1 to 0.
]]
--- @include "announce"

local done = redis.call('GET', KEYS[2])
if done then
  return tonumber(done)
end
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if current <= 0 then
  return 0
end
local left = current - 1
if left == 0 then
  redis.call('DEL', KEYS[1], KEYS[3])
  announce(ARGV[3], 'zero', ARGV[2])
else
  redis.call('SET', KEYS[1], left)
end
redis.call('SET', KEYS[2], left, 'PX', ARGV[1])
return left

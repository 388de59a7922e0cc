--[[
addPermits: add `delta` permits (negative: remove them; the count may go
below zero, and acquirers wait until releases bring it back up).

KEYS[1]  permits: <prefix>:{<name>} (string; created when absent)
KEYS[2]  marker: op marker <prefix>:{<name>}:op:<clientId>:<op> (string: the available
         count this op left), so a replay does not add twice
KEYS[3]  kind: kind marker <prefix>:{<name>}:kind (string 'semaphore'), set when the
         permits key is created, so inspect names the kind
ARGV[1]  delta: integer from -(2^31-1) to 2^31-1, not 0
ARGV[2]  replayWindowMs: how long the marker lives, integer ms
ARGV[3]  sharded: '1' announces with SPUBLISH (Cluster), '0' with PUBLISH
ARGV[4]  channel: the semaphore's channel <prefix>:{<name>}:permits (keys.ts)

Returns the available count after (a replay: what the first call left).

Publishes '<delta>:<available>' on `channel` when permits were added and some
are available.
]]
--- @include "announce"

local done = redis.call('GET', KEYS[2])
if done then
  return tonumber(done)
end
local available = redis.call('INCRBY', KEYS[1], ARGV[1])
redis.call('SET', KEYS[2], available, 'PX', ARGV[2])
redis.call('SET', KEYS[3], 'semaphore')
if tonumber(ARGV[1]) > 0 and available > 0 then
  announce(ARGV[4], ARGV[1] .. ':' .. available, ARGV[3])
end
return available

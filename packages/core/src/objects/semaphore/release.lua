--[[
release: give `count` permits back (anyone may: permits are not owned).

KEYS[1]  permits: <prefix>:{<name>} (string; created when absent)
KEYS[2]  marker: op marker <prefix>:{<name>}:op:<clientId>:<op> (string 'released'),
         so a replay of the same op does not count twice
ARGV[1]  count: how many to give back, integer from 1 to 2^31-1
ARGV[2]  replayWindowMs: how long the marker lives, integer ms
ARGV[3]  sharded: '1' announces with SPUBLISH (Cluster), '0' with PUBLISH
ARGV[4]  channel: the semaphore's channel <prefix>:{<name>}:permits (keys.ts)

Returns {available, receivers}: the available count after, and how many
subscriber connections the announcement reached (0 when none was sent, as on a
replay, which changes nothing).

Publishes '<count>:<available>' on `channel` when some are available after.
]]
--- @include "announce"

if redis.call('GET', KEYS[2]) then
  return {tonumber(redis.call('GET', KEYS[1]) or '0'), 0}
end
local available = redis.call('INCRBY', KEYS[1], ARGV[1])
redis.call('SET', KEYS[2], 'released', 'PX', ARGV[2])
local receivers = 0
if available > 0 then
  receivers = announce(ARGV[4], ARGV[1] .. ':' .. available, ARGV[3])
end
return {available, receivers}

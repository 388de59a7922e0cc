--[[
addPermits: add `delta` permits (negative: remove them; the count may go
below zero), after reclaiming lapsed permits.

KEYS[1]  permits: <prefix>:{<name>} (string; created when absent)
KEYS[2]  leases: <prefix>:{<name>}:leases (sorted set: id -> lease end, ms)
KEYS[3]  holders: <prefix>:{<name>}:holders (hash: id -> token)
KEYS[4]  marker: op marker <prefix>:{<name>}:op:<clientId>:<op> (string: the available
         count this op left), so a replay does not add twice
KEYS[5]  kind: kind marker <prefix>:{<name>}:kind (string 'permitExpirableSemaphore'),
         set when the permits key is created, so inspect names the kind with no permit leased
ARGV[1]  delta: integer from -(2^31-1) to 2^31-1, not 0
ARGV[2]  replayWindowMs: how long the marker lives, integer ms
ARGV[3]  sharded: '1' announces with SPUBLISH (Cluster), '0' with PUBLISH
ARGV[4]  channel: the semaphore's channel <prefix>:{<name>}:permits (keys.ts)

Returns the available count after (a replay: what the first call left).

Publishes '<came back>:<available>' (added and reclaimed) on `channel` when
permits came back and some are available.
]]
--- @include "announce"
--- @include "reclaim-permits"

local done = redis.call('GET', KEYS[4])
if done then
  return tonumber(done)
end
local _, reclaimed = reclaimPermits(KEYS[1], KEYS[2], KEYS[3])
local available = redis.call('INCRBY', KEYS[1], ARGV[1])
redis.call('SET', KEYS[4], available, 'PX', ARGV[2])
redis.call('SET', KEYS[5], 'permitExpirableSemaphore')
if (tonumber(ARGV[1]) > 0 or reclaimed > 0) and available > 0 then
  announce(ARGV[4], (math.max(tonumber(ARGV[1]), 0) + reclaimed) .. ':' .. available, ARGV[3])
end
return available

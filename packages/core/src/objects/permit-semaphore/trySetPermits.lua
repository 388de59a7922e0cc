--[[
trySetPermits: set the available permits, only when the permits key is
absent. Lapsed permits are reclaimed first.

KEYS[1]  permits: <prefix>:{<name>} (string)
KEYS[2]  leases: <prefix>:{<name>}:leases (sorted set: id -> lease end, ms)
KEYS[3]  holders: <prefix>:{<name>}:holders (hash: id -> token)
KEYS[4]  marker: op marker <prefix>:{<name>}:op:<clientId>:<op> (string: '1' or '0'),
         so a replay answers its first outcome
KEYS[5]  kind: kind marker <prefix>:{<name>}:kind (string 'permitExpirableSemaphore'),
         set when the permits key is created, so inspect names the kind with no permit leased
ARGV[1]  count: the permits to set, integer from 1 to 2^31-1
ARGV[2]  replayWindowMs: how long the marker lives, integer ms
ARGV[3]  sharded: '1' announces with SPUBLISH (Cluster), '0' with PUBLISH
ARGV[4]  channel: the semaphore's channel <prefix>:{<name>}:permits (keys.ts)

Returns 1 when it set the permits, 0 when they were set already.

Publishes '<count>:<count>' on `channel` when it set them.
]]
--- @include "announce"
--- @include "reclaim-permits"
--- @include "set-once"

local done = redis.call('GET', KEYS[4])
if done then
  return tonumber(done)
end
reclaimPermits(KEYS[1], KEYS[2], KEYS[3])
local set = setOnce(KEYS[1], ARGV[1], KEYS[4], ARGV[2])
if set == 1 then
  redis.call('SET', KEYS[5], 'permitExpirableSemaphore')
  announce(ARGV[4], ARGV[1] .. ':' .. ARGV[1], ARGV[3])
end
return set

--[[
trySetPermits: set the available permits, only when the key is absent.

KEYS[1]  permits: <prefix>:{<name>} (string)
KEYS[2]  marker: op marker <prefix>:{<name>}:op:<clientId>:<op> (string: '1' or '0',
         this op's outcome), so a replay answers its first outcome
KEYS[3]  kind: kind marker <prefix>:{<name>}:kind (string 'semaphore'), set when the
         permits key is created, so inspect names the kind
ARGV[1]  count: the permits to set, integer from 1 to 2^31-1
ARGV[2]  replayWindowMs: how long the marker lives, integer ms
ARGV[3]  sharded: '1' announces with SPUBLISH (Cluster), '0' with PUBLISH
ARGV[4]  channel: the semaphore's channel <prefix>:{<name>}:permits (keys.ts)

Returns 1 when it set the permits, 0 when they were set already.

Publishes '<count>:<count>' on `channel` when it set them (waiters may be
waiting for the set-up).
]]
--- @include "announce"
--- @include "set-once"

local done = redis.call('GET', KEYS[2])
if done then
  return tonumber(done)
end
local set = setOnce(KEYS[1], ARGV[1], KEYS[2], ARGV[2])
if set == 1 then
  redis.call('SET', KEYS[3], 'semaphore')
  announce(ARGV[4], ARGV[1] .. ':' .. ARGV[1], ARGV[3])
end
return set

--[[
available: the available permits, after reclaiming lapsed ones (so it
counts permits whose holders crashed).

KEYS[1]  permits: <prefix>:{<name>} (string)
KEYS[2]  leases: <prefix>:{<name>}:leases (sorted set: id -> lease end, ms)
KEYS[3]  holders: <prefix>:{<name>}:holders (hash: id -> token)
ARGV[1]  sharded: '1' announces with SPUBLISH (Cluster), '0' with PUBLISH
ARGV[2]  channel: the semaphore's channel <prefix>:{<name>}:permits (keys.ts)

Returns the available count (0 when not set; negative after addPermits removed
more than there was).

Publishes '<reclaimed>:<available>' on `channel` when it reclaimed permits and
some are available.
]]
--- @include "announce"
--- @include "reclaim-permits"

local _, reclaimed = reclaimPermits(KEYS[1], KEYS[2], KEYS[3])
local available = tonumber(redis.call('GET', KEYS[1]) or '0')
if reclaimed > 0 and available > 0 then
  announce(ARGV[2], reclaimed .. ':' .. available, ARGV[1])
end
return available

--[[
acquire: take one leased permit, after giving lapsed permits back to the pool.

KEYS[1]  permits: <prefix>:{<name>} (string: available permits; absent: not set, 0)
KEYS[2]  leases: <prefix>:{<name>}:leases (sorted set: permit id -> lease end,
         Unix ms of the server's clock)
KEYS[3]  holders: <prefix>:{<name>}:holders (hash: permit id -> fencing token)
KEYS[4]  fence: fencing counter of the slot <prefix>:{<slot tag>}:fence (string)
KEYS[5]  marker: marker of this permit <prefix>:{<name>}:permit:<id> (string, left by
         cancel.lua ('cancelled') or release.lua ('released:<op>'))
ARGV[1]  id: the permit's id, <clientId>:<op>, new for every try
ARGV[2]  leaseMs: the permit's lease, integer ms from now on the server's clock
ARGV[3]  sharded: '1' announces with SPUBLISH (Cluster), '0' with PUBLISH
ARGV[4]  channel: the semaphore's channel <prefix>:{<name>}:permits (keys.ts)

Returns
  {1, token}    granted: the permit's fencing token (decimal string). A replay of
                the id (ioredis resends after a reconnect) answers the same token.
  {0, retryMs}  none available: ms until the earliest lease ends, -1 when none runs
  {-1}          this id was cancelled or released before it arrived: nothing changed

Publishes '<came back>:<available>' on `channel` when it reclaimed lapsed permits
and some are still available after its own.
]]
--- @include "mint-token"
--- @include "announce"
--- @include "reclaim-permits"

local nowMs, reclaimed = reclaimPermits(KEYS[1], KEYS[2], KEYS[3])
local token = redis.call('HGET', KEYS[3], ARGV[1])
if token then
  return {1, token}
end
if redis.call('EXISTS', KEYS[5]) == 1 then
  return {-1}
end

local available = tonumber(redis.call('GET', KEYS[1]) or '0')
if available < 1 then
  local first = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
  if first[2] then
    return {0, math.max(1, tonumber(first[2]) - nowMs)}
  end
  return {0, -1}
end

redis.call('DECR', KEYS[1])
token = mintToken(KEYS[4])
redis.call('ZADD', KEYS[2], nowMs + tonumber(ARGV[2]), ARGV[1])
redis.call('HSET', KEYS[3], ARGV[1], token)
local cameBack = math.min(reclaimed, available - 1)
if cameBack > 0 then
  announce(ARGV[4], cameBack .. ':' .. (available - 1), ARGV[3])
end
return {1, token}

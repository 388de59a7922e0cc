-- reclaim-permits (include): give the lapsed permits of a permit-expirable
-- semaphore back to its pool, by the server's clock, before the script does
-- anything else. A permit has lapsed when its lease end (its score in the
-- leases sorted set, Unix ms of the server's TIME) is at or before now; it
-- leaves the sorted set and the holders hash, and the available count grows
-- by one for each. Returns the server's time in ms and how many were reclaimed.
--- @include "now-ms"
local function reclaimPermits(permitsKey, leasesKey, holdersKey)
  local now = nowMs()
  local lapsed = redis.call('ZRANGEBYSCORE', leasesKey, '-inf', now)
  local count = #lapsed
  if count > 0 then
    redis.call('ZREMRANGEBYSCORE', leasesKey, '-inf', now)
    -- In chunks: unpack() of a very long list would overflow Lua's stack.
    for first = 1, count, 1000 do
      redis.call('HDEL', holdersKey, unpack(lapsed, first, math.min(first + 999, count)))
    end
    redis.call('INCRBY', permitsKey, count)
  end
  return now, count
end

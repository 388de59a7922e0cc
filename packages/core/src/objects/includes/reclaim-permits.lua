-- reclaim-permits (include): give a permit-expirable semaphore's lapsed permits (lease end, their
-- score in the leases zset, at or before the server's now) back to its pool, before anything else.
-- Returns the server's time in ms and how many were reclaimed.
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

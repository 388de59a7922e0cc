-- fair-queue (include): the waiter queue of a fair lock.
-- queueKey: list of waiter ids (owners) in arrival order; leasesKey: zset of
-- waiter id -> end of its waiter lease (server ms). A waiter renews its lease by
-- trying again (at least every third of the lease); one whose lease lapsed on
-- the server clock is dropped, so a crashed waiter holds the ones behind it up
-- no longer than its lease, and a live one, renewing, is never dropped.
local function nowMs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Drops every waiter whose lease lapsed; returns the live head (or nil).
local function purgeWaiters(queueKey, leasesKey, now)
  local lapsed = redis.call('ZRANGEBYSCORE', leasesKey, '-inf', now)
  for _, id in ipairs(lapsed) do
    redis.call('LREM', queueKey, 0, id)
  end
  if #lapsed > 0 then
    redis.call('ZREMRANGEBYSCORE', leasesKey, '-inf', now)
  end
  return redis.call('LINDEX', queueKey, 0)
end

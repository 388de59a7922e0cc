-- fair-queue (include): the waiter queue of a fair lock.
-- queueKey: list of waiter ids (owners) in arrival order; leasesKey: zset waiter id -> end of its
-- waiter lease (server ms); ticketsKey: hash waiter id -> "<op> <leaseMs>" of the try that last set
-- that lease (its ticket). A waiter renews its lease by trying again; one whose lease lapsed is
-- dropped, so a crashed waiter holds up the ones behind it no longer than its lease.
--- @include "now-ms"

-- Returns how many entries were removed (0: it was not queued).
local function dequeue(queueKey, leasesKey, ticketsKey, id)
  redis.call('ZREM', leasesKey, id)
  redis.call('HDEL', ticketsKey, id)
  return redis.call('LREM', queueKey, 0, id)
end

-- A try does this, so an owner whose place lapsed queues again at the back.
local function purgeLapsed(queueKey, leasesKey, ticketsKey, now)
  local lapsed = redis.call('ZRANGEBYSCORE', leasesKey, '-inf', now)
  for _, id in ipairs(lapsed) do
    redis.call('LREM', queueKey, 0, id)
    redis.call('HDEL', ticketsKey, id)
  end
  if #lapsed > 0 then
    redis.call('ZREMRANGEBYSCORE', leasesKey, '-inf', now)
  end
end

-- The live head and the end of its waiter lease (or nil). Heads whose lease lapsed or is missing
-- (say by eviction) are dropped, or they would hold every waiter up; lapsed waiters further back are
-- left to the next try's purgeLapsed, which keeps a grant to one command per live head.
local function liveHead(queueKey, leasesKey, ticketsKey, now)
  local head = redis.call('LINDEX', queueKey, 0)
  while head do
    local leaseEnd = tonumber(redis.call('ZSCORE', leasesKey, head))
    if leaseEnd and leaseEnd > now then
      return head, leaseEnd
    end
    dequeue(queueKey, leasesKey, ticketsKey, head)
    head = redis.call('LINDEX', queueKey, 0)
  end
  return nil
end

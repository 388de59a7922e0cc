-- rw-state (include): the state of a read-write lock.
-- Keys: hash <prefix>:{<name>} with mode ('read' | 'write'); the writer's fields
-- w (owner), wc (count), wt (token), wo (last op); per reader r:<owner> (count),
-- rt:<owner> (token), ro:<owner> (last op). Each reader's lease is its score in
-- the zset <prefix>:{<name>}:readers (server ms), so a crashed reader frees its
-- share when its own lease lapses. Waiting writers are the zset
-- <prefix>:{<name>}:writers (owner -> waiter lease end); a live one holds back
-- new readers of other owners.
--- @include "now-ms"

-- Drops readers whose lease lapsed and waiting writers whose waiter lease did.
-- Returns how many readers are left.
local function purgeRw(hash, readers, writers, now)
  local lapsed = redis.call('ZRANGEBYSCORE', readers, '-inf', now)
  for _, owner in ipairs(lapsed) do
    redis.call('HDEL', hash, 'r:' .. owner, 'rt:' .. owner, 'ro:' .. owner)
  end
  if #lapsed > 0 then
    redis.call('ZREMRANGEBYSCORE', readers, '-inf', now)
  end
  redis.call('ZREMRANGEBYSCORE', writers, '-inf', now)
  local left = redis.call('ZCARD', readers)
  if left == 0 and redis.call('HGET', hash, 'mode') == 'read' then
    redis.call('DEL', hash)
  end
  return left
end

-- Takes `owner`'s last hold in `mode` off. Returns 'free' (all deleted), 'downgraded' (a writer left,
-- readers stay: waiting readers may enter), or nil when other readers still hold it.
local function dropRwHold(hash, readers, owner, mode)
  if mode == 'write' then
    redis.call('HDEL', hash, 'w', 'wc', 'wt', 'wo')
  else
    redis.call('HDEL', hash, 'r:' .. owner, 'rt:' .. owner, 'ro:' .. owner)
    redis.call('ZREM', readers, owner)
  end
  if redis.call('ZCARD', readers) == 0 and not redis.call('HGET', hash, 'w') then
    redis.call('DEL', hash, readers)
    return 'free'
  end
  if mode == 'write' then
    redis.call('HSET', hash, 'mode', 'read')
    return 'downgraded'
  end
  return nil
end

-- The TTL of the hash (and the readers zset) becomes max(current, leaseMs).
local function extendRw(hash, readers, leaseMs)
  if redis.call('PTTL', hash) < leaseMs then
    redis.call('PEXPIRE', hash, leaseMs)
  end
  if redis.call('EXISTS', readers) == 1 and redis.call('PTTL', readers) < leaseMs then
    redis.call('PEXPIRE', readers, leaseMs)
  end
end

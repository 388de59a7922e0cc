-- rw-state (include): the state of a read-write lock.
-- Keys: hash <prefix>:{<name>} with mode ('read' | 'write'); the writer's fields
-- w (owner), wc (count), wt (token), wo (last op); per reader r:<owner> (count),
-- rt:<owner> (token), ro:<owner> (last op). Each reader's lease is its score in
-- the zset <prefix>:{<name>}:readers (server ms), so a crashed reader frees its
-- share when its own lease lapses. Waiting writers are the zset
-- <prefix>:{<name>}:writers (owner -> waiter lease end); a live one holds back
-- new readers of other owners.
local function nowMs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

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

-- The TTL of the hash (and the readers zset) becomes max(current, leaseMs).
local function extendRw(hash, readers, leaseMs)
  if redis.call('PTTL', hash) < leaseMs then
    redis.call('PEXPIRE', hash, leaseMs)
  end
  if redis.call('EXISTS', readers) == 1 and redis.call('PTTL', readers) < leaseMs then
    redis.call('PEXPIRE', readers, leaseMs)
  end
end

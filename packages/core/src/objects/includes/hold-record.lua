-- hold-record (include): a lock's hold (the lock's, the non-reentrant lock's, the fair lock's) is a hash,
-- as Redisson keeps it: field <owner> (<clientId>:<taskId>) -> hold count, HINCRBY up and down, DEL at 0;
-- beside it, fields without ':', so no owner can take their names:
--   t  the fencing token (decimal);
--   o  the last op applied to the hold (a replay of it answers the same, counting once); absent on a
--      fair lock's hold handed over and not yet claimed, whose count is 0;
--   n  '1' on a non-reentrant lock's hold (its count stays 1).

-- {owner, count, token, op, once}, or nil when free. Anything else at the key (another type, a hash that
-- is no hold) is an error before the caller writes anything: read as a hold, it would make lock() wait
-- on a holder that never lets go.
local function readHold(lock)
  local fields = redis.call('HGETALL', lock)
  if #fields == 0 then
    return nil
  end
  -- Locals, then one table: a table filled field by field grows its hash part three times.
  local owner, count, token, op
  local once = false
  for i = 1, #fields, 2 do
    local field, value = fields[i], fields[i + 1]
    if field == 't' and string.find(value, '^%d+$') then
      token = value
    elseif field == 'o' then
      op = value
    elseif field == 'n' and value == '1' then
      once = true
    elseif not owner and string.find(field, ':', 1, true) and string.find(value, '^%d+$') then
      owner, count = field, tonumber(value)
    else
      owner = nil
      break
    end
  end
  if not owner or not token then
    error({err = 'WRONGTYPE the lock key holds no lock hold'})
  end
  return {owner = owner, count = count, token = token, op = op, once = once}
end

-- A new hold at the free `lock`, living leaseMs: count 1, or 0 for a fair lock's hand-off (op nil: it has
-- none until its owner's claim counts it).
local function grantHold(lock, owner, count, token, op, once, leaseMs)
  if once then
    redis.call('HSET', lock, owner, count, 't', token, 'o', op, 'n', '1')
  elseif op then
    redis.call('HSET', lock, owner, count, 't', token, 'o', op)
  else
    redis.call('HSET', lock, owner, count, 't', token)
  end
  redis.call('PEXPIRE', lock, leaseMs)
end

-- Counts `by` (1 or -1) onto the owner's hold and remembers `op` as its last. Returns the new count.
local function countHold(lock, owner, by, op)
  local count = redis.call('HINCRBY', lock, owner, by)
  redis.call('HSET', lock, 'o', op)
  return count
end

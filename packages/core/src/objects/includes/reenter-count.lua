-- reenter-count (include): the part of an acquire the lock and the fair lock
-- share for an owner that holds the lock already (a reentry; on a fair lock
-- also the claim of a hold handed over, count 0 -> 1). `held` is the hash's
-- {owner, count, token, op}. The caller has answered a replay of the hold's
-- last op and refused a cancelled op first.
-- Counts one more, remembers `op`, and makes the TTL max(current, leaseMs).
local function reenterCount(lock, held, leaseMs, op)
  local count = tonumber(held[2]) + 1
  redis.call('HSET', lock, 'count', count, 'op', op)
  if redis.call('PTTL', lock) < tonumber(leaseMs) then
    redis.call('PEXPIRE', lock, leaseMs)
  end
  return {1, held[3], count}
end

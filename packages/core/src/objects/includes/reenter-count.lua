-- reenter-count (include): a reentry (or a fair lock's claim, count 0 -> 1), after the caller answered a
-- replay and refused a cancelled op. `held` is readHold's. Counts one more, remembers `op`, and makes
-- the TTL max(current, leaseMs).
--- @include "hold-record"

local function reenterCount(lock, held, leaseMs, op)
  local count = countHold(lock, held.owner, 1, op)
  if redis.call('PTTL', lock) < tonumber(leaseMs) then
    redis.call('PEXPIRE', lock, leaseMs)
  end
  return {1, held.token, count}
end

-- reenter-count (include): a reentry (or a fair lock's claim, count 0 -> 1), after the caller answered a
-- replay and refused a cancelled op. `held` is readHold's. Counts one more, remembers `op`, and makes
-- the TTL max(current, leaseMs).
--- @include "hold-record"

local function reenterCount(lock, held, leaseMs, op)
  local count = held.count + 1
  local extend = nil
  if redis.call('PTTL', lock) < tonumber(leaseMs) then
    extend = leaseMs
  end
  writeHold(lock, held.owner, count, held.token36, op, held.once, extend)
  return {1, held.token, count}
end

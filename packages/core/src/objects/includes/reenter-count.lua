-- reenter-count (include): the part of an acquire the lock and the fair lock
-- share for an owner that holds the lock already (a reentry; on a fair lock
-- also the claim of a hold handed over, count 0 -> 1). `held` is readHold's.
-- The caller has answered a replay of the hold's last op and refused a
-- cancelled op first.
-- Counts one more, remembers `op`, and makes the TTL max(current, leaseMs).
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

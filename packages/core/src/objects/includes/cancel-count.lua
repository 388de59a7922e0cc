-- cancel-count (include): the cancel the lock and the fair lock share. `op` is this cancel's,
-- `acquireOp` the acquire's to undo, `all` '1' for every count. Leaves a tombstone in `cancelled`
-- (living replayWindowMs), then counts the acquire off if it ran and is the hold's last op; at 0
-- the key is deleted and `released` remembers <owner>:<op>.
-- Returns the reply (0 not run, 1 undone) and whether the lock is now free, for the caller to announce.
--- @include "hold-record"

local function cancelCount(lock, released, cancelled, owner, op, acquireOp, all, replayWindowMs)
  -- Read first: a key that holds no hold fails the script before the tombstone is written.
  local held = readHold(lock)
  redis.call('HSET', cancelled, owner .. ':' .. acquireOp, '1')
  redis.call('PEXPIRE', cancelled, replayWindowMs)
  if not held or held.owner ~= owner or held.op ~= acquireOp then
    return 0, false
  end
  local count = held.count - 1
  if count > 0 and all ~= '1' then
    countHold(lock, owner, -1, op)
    return 1, false
  end
  redis.call('DEL', lock)
  redis.call('SET', released, owner .. ':' .. op, 'PX', replayWindowMs)
  return 1, true
end

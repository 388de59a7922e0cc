-- release-count (include): the release the lock and the fair lock share: `all` '1' releases every
-- count, `token` '' any hold of the owner. Returns the reply when the lock stays, or nil once the
-- last count went: the key is deleted and `released` remembers <owner>:<op> for replayWindowMs, so
-- a replayed full release answers released.
--- @include "hold-record"

local function releaseCount(lock, released, owner, op, all, token, replayWindowMs)
  local held = readHold(lock)
  if not held or held.owner ~= owner or (token ~= '' and held.token ~= token) then
    if redis.call('GET', released) == owner .. ':' .. op then
      return {1, 0, 0}
    end
    if held then
      return {-1, 1}
    end
    return {-1, 0}
  end
  if held.op == op then
    return {1, held.count, 0}
  end
  -- A fair lock's hold handed over and not yet counted (count 0) is one hold.
  local count = held.count - 1
  if count > 0 and all ~= '1' then
    return {1, countHold(lock, owner, -1, op), 0}
  end
  redis.call('DEL', lock)
  redis.call('SET', released, owner .. ':' .. op, 'PX', replayWindowMs)
  return nil
end

-- release-count (include): the part of a release the lock and the fair lock
-- share: `all` '1' releases every count, `token` '' any hold of the owner.
-- Returns the script's reply when the lock stays (not this owner's hold, a
-- replay, counts left), or nil once the last count went: the hash is deleted
-- and `released` remembers <owner>:<op> for replayWindowMs, so a replayed full
-- release answers released; the caller then announces the release its own way.
local function releaseCount(lock, released, owner, op, all, token, replayWindowMs)
  local held = redis.call('HMGET', lock, 'owner', 'count', 'op', 'token')
  if held[1] ~= owner or (token ~= '' and held[4] ~= token) then
    if redis.call('GET', released) == owner .. ':' .. op then
      return {1, 0, 0}
    end
    if held[1] then
      return {-1, 1}
    end
    return {-1, 0}
  end
  if held[3] == op then
    return {1, tonumber(held[2]), 0}
  end
  -- A fair lock's hold handed over and not yet counted (count 0) is one hold.
  local count = tonumber(held[2]) - 1
  if count > 0 and all ~= '1' then
    redis.call('HSET', lock, 'count', count, 'op', op)
    return {1, count, 0}
  end
  redis.call('DEL', lock)
  redis.call('SET', released, owner .. ':' .. op, 'PX', replayWindowMs)
  return nil
end

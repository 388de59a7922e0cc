-- release-count (include): the part of a release the lock and the fair lock
-- share. Reads ARGV[1] owner, ARGV[2] op, ARGV[3] all ('1': every count),
-- ARGV[4] token ('' any), ARGV[5] replayWindowMs. Returns the script's reply
-- when the lock stays (not this owner's hold, a replay, counts left), or nil
-- once the last count went: the hash is deleted and `released` remembers
-- <owner>:<op> for ARGV[5] ms, so a replayed full release answers released;
-- the caller then announces the release its own way.
local function releaseCount(lock, released)
  local held = redis.call('HMGET', lock, 'owner', 'count', 'op', 'token')
  if held[1] ~= ARGV[1] or (ARGV[4] ~= '' and held[4] ~= ARGV[4]) then
    if redis.call('GET', released) == ARGV[1] .. ':' .. ARGV[2] then
      return {1, 0, 0}
    end
    if held[1] then
      return {-1, 1}
    end
    return {-1, 0}
  end
  if held[3] == ARGV[2] then
    return {1, tonumber(held[2]), 0}
  end
  -- A fair lock's hold handed over and not yet counted (count 0) is one hold.
  local count = tonumber(held[2]) - 1
  if count > 0 and ARGV[3] ~= '1' then
    redis.call('HSET', lock, 'count', count, 'op', ARGV[2])
    return {1, count, 0}
  end
  redis.call('DEL', lock)
  redis.call('SET', released, ARGV[1] .. ':' .. ARGV[2], 'PX', ARGV[5])
  return nil
end

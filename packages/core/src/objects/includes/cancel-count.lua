-- cancel-count (include): the part of a cancel the lock and the fair lock
-- share. Reads ARGV[1] owner, ARGV[2] op of this cancel, ARGV[3] the acquire
-- op to undo, ARGV[4] all ('1': every count), ARGV[5] replayWindowMs. Leaves
-- the tombstone <owner>:<acquire op> in `cancelled` (the hash lives ARGV[5] ms
-- from now), then, if the acquire had run and is the hold's last op, counts
-- it off; at 0 the hash is deleted and `released` remembers <owner>:<op>.
-- Returns the script's reply (0 not run, 1 undone) and whether the lock is
-- now free; the caller then announces the release its own way.
local function cancelCount(lock, released, cancelled)
  redis.call('HSET', cancelled, ARGV[1] .. ':' .. ARGV[3], '1')
  redis.call('PEXPIRE', cancelled, ARGV[5])
  local held = redis.call('HMGET', lock, 'owner', 'count', 'op')
  if held[1] ~= ARGV[1] or held[3] ~= ARGV[3] then
    return 0, false
  end
  local count = tonumber(held[2]) - 1
  if count > 0 and ARGV[4] ~= '1' then
    redis.call('HSET', lock, 'count', count, 'op', ARGV[2])
    return 1, false
  end
  redis.call('DEL', lock)
  redis.call('SET', released, ARGV[1] .. ':' .. ARGV[2], 'PX', ARGV[5])
  return 1, true
end

-- set-once (include): SET NX, keeping the outcome (1 set, 0 not) in `marker` for replayWindowMs,
-- where the script looks first, so a replay answers its first outcome. Returns the outcome.
local function setOnce(key, value, marker, replayWindowMs)
  local set = redis.call('SET', key, value, 'NX') and 1 or 0
  redis.call('SET', marker, set, 'PX', replayWindowMs)
  return set
end

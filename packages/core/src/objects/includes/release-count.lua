-- release-count (include): the release the lock and the fair lock share: `all` '1' releases every
-- count, `token` '' any hold of the owner. Returns the reply when the lock stays, or nil once the
-- last count went: the key is deleted and `released` remembers <owner>:<op> for replayWindowMs, so
-- a replayed full release answers released (its reply: 0, no receivers).
--- @include "hold-record"

-- The owner's hold at `lock`: count (number) and last op (nil on a hand-off not yet claimed); nil when
-- `lock` holds anything else (free, another owner's hold, no hold at all), which the caller then reads
-- with readHold. As strict as readHold at a fraction of its cost: the fields are compared with the
-- names this owner's hold has, so no pattern runs but on the count and a token not given ('' any).
local function ownHold(lock, owner, token)
  local fields = redis.call('HGETALL', lock)
  local count, heldToken, op
  for i = 1, #fields, 2 do
    local field, value = fields[i], fields[i + 1]
    if field == owner then
      count = value
    elseif field == 't' then
      heldToken = value
    elseif field == 'o' then
      op = value
    elseif field ~= 'n' or value ~= '1' then
      return nil
    end
  end
  if not count or not heldToken or not string.find(count, '^%d+$') then
    return nil
  end
  if token == '' then
    if not string.find(heldToken, '^%d+$') then
      return nil
    end
  elseif heldToken ~= token then
    return nil
  end
  return tonumber(count), op
end

local function releaseCount(lock, released, owner, op, all, token, replayWindowMs)
  local count, heldOp = ownHold(lock, owner, token)
  if not count then
    -- Not the owner's (with that token): readHold rejects a key that holds no hold before any answer.
    local held = readHold(lock)
    if redis.call('GET', released) == owner .. ':' .. op then
      return 0
    end
    if held then
      return {-1, 1}
    end
    return {-1, 0}
  end
  if heldOp == op then
    return {1, count, 0}
  end
  -- A fair lock's hold handed over and not yet counted (count 0) is one hold.
  if count > 1 and all ~= '1' then
    return {1, countHold(lock, owner, -1, op), 0}
  end
  redis.call('DEL', lock)
  redis.call('SET', released, owner .. ':' .. op, 'PX', replayWindowMs)
  return nil
end

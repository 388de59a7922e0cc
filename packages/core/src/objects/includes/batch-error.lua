-- batch-error (include): what a batch answers for an item whose function raised (caught by pcall), as an
-- error reply ({err = ...}): redis.call's error keeps its code (WRONGTYPE, OOM…); a Lua error gets ERR.
local function batchError(raised)
  if type(raised) == 'table' and raised.err then
    return raised
  end
  local text = tostring(raised)
  if string.find(text, '^%u+ ') then
    return {err = text}
  end
  return {err = 'ERR ' .. text}
end

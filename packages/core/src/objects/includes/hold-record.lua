-- hold-record (include): a lock's hold is one string "<head> <token> <owner>", small enough (<= 44
-- bytes) for Redis to store as EMBSTR, in one allocation:
--   token  the fencing token in base 36;
--   owner  <clientId>:<taskId>, last, so it may hold any character;
--   head   the last op, alone for count 1, else "<count>*<op>" (a hold handed over, not yet counted:
--          "0*", op ''); a non-reentrant lock's op follows '!' (its count stays 1).

-- {owner, count, token (decimal), token36, op, once (a non-reentrant lock's)}, or nil when free.
local function readHold(lock)
  local record = redis.call('GET', lock)
  if not record then
    return nil
  end
  local head, token, owner = string.match(record, '^(%S*) (%w+) (.+)$')
  if not head then
    error({err = 'WRONGTYPE the lock key holds no lock hold'})
  end
  local count, op = 1, head
  local star = string.find(head, '*', 1, true)
  if star then
    count, op = tonumber(string.sub(head, 1, star - 1)), string.sub(head, star + 1)
  end
  local once = string.sub(op, 1, 1) == '!'
  if once then
    op = string.sub(op, 2)
  end
  -- tonumber(token, 36) and '%d' go through C (unsigned) longs: exact for a token (< 2^53) on every
  -- 64-bit Redis, and '%d' is cheaper than '%.0f'.
  return {owner = owner, count = count, token = string.format('%d', tonumber(token, 36)), token36 = token, op = op, once = once}
end

-- A token (a number, or its decimal digits) in base 36. Unrolled: a token < 2^53 < 36^11 has at most
-- 11 digits, and a loop filling a table costs twice as much in Redis's Lua. `n % 36` is exact: n < 2^53,
-- and n / 36 is never within half an ulp of the next integer.
local function token36(token)
  local n = tonumber(token)
  local d1 = n % 36
  n = (n - d1) / 36
  local d2 = n % 36
  n = (n - d2) / 36
  local d3 = n % 36
  n = (n - d3) / 36
  local d4 = n % 36
  n = (n - d4) / 36
  local d5 = n % 36
  n = (n - d5) / 36
  local d6 = n % 36
  n = (n - d6) / 36
  local d7 = n % 36
  n = (n - d7) / 36
  local d8 = n % 36
  n = (n - d8) / 36
  local d9 = n % 36
  n = (n - d9) / 36
  local d10 = n % 36
  n = (n - d10) / 36
  local d11 = n % 36
  local digits = string.char(
    d11 < 10 and d11 + 48 or d11 + 87, d10 < 10 and d10 + 48 or d10 + 87, d9 < 10 and d9 + 48 or d9 + 87,
    d8 < 10 and d8 + 48 or d8 + 87, d7 < 10 and d7 + 48 or d7 + 87, d6 < 10 and d6 + 48 or d6 + 87,
    d5 < 10 and d5 + 48 or d5 + 87, d4 < 10 and d4 + 48 or d4 + 87, d3 < 10 and d3 + 48 or d3 + 87,
    d2 < 10 and d2 + 48 or d2 + 87, d1 < 10 and d1 + 48 or d1 + 87
  )
  return string.sub(digits, string.find(digits, '[^0]') or 11)
end

-- `digits`: the token in base 36. Without leaseMs the key keeps its TTL.
local function writeHold(lock, owner, count, digits, op, once, leaseMs)
  local head = op
  if once then
    head = '!' .. head
  end
  if count ~= 1 then
    head = count .. '*' .. head
  end
  local record = head .. ' ' .. digits .. ' ' .. owner
  if leaseMs then
    redis.call('SET', lock, record, 'PX', leaseMs)
  else
    redis.call('SET', lock, record, 'KEEPTTL')
  end
end

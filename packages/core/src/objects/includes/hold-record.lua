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

-- A decimal token in base 36, built as one string, not one per digit. `n % 36` is exact: n < 2^53,
-- and n / 36 is never within half an ulp of the next integer.
local function token36(token)
  local n, codes, i = tonumber(token), {}, 0
  repeat
    local d = n % 36
    i = i + 1
    codes[i] = d < 10 and d + 48 or d + 87
    n = (n - d) / 36
  until n == 0
  return string.reverse(string.char(unpack(codes, 1, i)))
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

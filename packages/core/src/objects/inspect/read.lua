--[[
read: read one object's keys for inspect() and list(), each by its TYPE, in
one consistent step. It knows no layout: each kind lists its keys (kinds.ts)
and reads the reply. Read-only: sorted set entries whose lease (score, server
ms) has ended, which the next state change purges, are counted apart, not listed.

KEYS[i]    key: key i of the object, <prefix>:{<name>} or <prefix>:{<name>}:<suffix>
           (one hash tag: one Cluster slot)
ARGV[1]    limit: most entries listed per key, integer from 1 to 10000
ARGV[i+1]  by: '' (read the key whole, bounded by limit), or the index j < i
           of a list or sorted set read before: read only the members listed
           in read j (a sorted set: their live entries, in read j's order; a
           hash: the fields they name)

Returns {nowMs, read1, read2, ...}: read i = {type, pttl, ...} of KEYS[i]
  type    TYPE: 'none', 'string', 'hash', 'list', 'zset' or another
  pttl    PTTL: ms left, -1 without TTL, -2 absent
  string  {type, pttl, value}
  hash    {type, pttl, field1, value1, ...}: every field (HGETALL), or those
          of the members (missing ones left out)
  list    {type, pttl, item1, ...}: the first limit items
  zset    {type, pttl, live, lapsed, member1, score1, ...}: live: entries
          whose score is after now, lapsed: the others; at most limit live
          entries listed
  other   {type, pttl}

Publishes nothing.
]]
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local limit = tonumber(ARGV[1])
local live = '(' .. now

local reply = {now}

-- The members a list or sorted set read lists ({} for another read).
local function membersOf(read)
  local members = {}
  local first, step = 3, 1
  if read[1] == 'zset' then
    first, step = 5, 2
  elseif read[1] ~= 'list' then
    return members
  end
  for j = first, #read, step do
    members[#members + 1] = read[j]
  end
  return members
end

local function readZset(key, members, read)
  read[3] = redis.call('ZCOUNT', key, live, '+inf')
  read[4] = redis.call('ZCOUNT', key, '-inf', now)
  if not members then
    local entries = redis.call('ZRANGEBYSCORE', key, live, '+inf', 'WITHSCORES', 'LIMIT', 0, limit)
    for j = 1, #entries do
      read[#read + 1] = entries[j]
    end
    return
  end
  for _, member in ipairs(members) do
    local score = tonumber(redis.call('ZSCORE', key, member))
    if score and score > now then
      read[#read + 1] = member
      read[#read + 1] = score
    end
  end
end

local function readHash(key, members, read)
  if not members then
    for _, entry in ipairs(redis.call('HGETALL', key)) do
      read[#read + 1] = entry
    end
    return
  end
  for _, field in ipairs(members) do
    local value = redis.call('HGET', key, field)
    if value then
      read[#read + 1] = field
      read[#read + 1] = value
    end
  end
end

for i = 1, #KEYS do
  local key = KEYS[i]
  local by = ARGV[i + 1]
  local members = nil
  if by ~= '' then
    members = membersOf(reply[tonumber(by) + 1])
  end
  local keyType = redis.call('TYPE', key)['ok']
  local read = {keyType, redis.call('PTTL', key)}
  if keyType == 'string' then
    read[3] = redis.call('GET', key)
  elseif keyType == 'hash' then
    readHash(key, members, read)
  elseif keyType == 'list' then
    for _, item in ipairs(redis.call('LRANGE', key, 0, limit - 1)) do
      read[#read + 1] = item
    end
  elseif keyType == 'zset' then
    readZset(key, members, read)
  end
  reply[#reply + 1] = read
end
return reply

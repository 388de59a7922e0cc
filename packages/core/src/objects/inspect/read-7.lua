--[[
read-7: read one object's state from the public data layout, for inspect()
and list(): its main key and the suffix keys any kind of object keeps, in one
step, so the reply is one consistent snapshot. Read-only: it purges nothing.
Entries whose lease has ended on the server clock (readers, queued waiters,
waiting writers, permits) are what the next state change purges: they are
left out of the lists and the counts here. Every list is bounded by the limit.
A key of an unexpected type is reported by its type and not read.

KEYS[1]  main: <prefix>:{<name>}: hash of a lock or fair lock (owner, count,
         token, op) or of a read-write lock (mode, w, wc, wt, r:<owner>,
         rt:<owner>, ...); string of a semaphore's available permits or a
         latch's count
KEYS[2]  queue: fair lock queue <prefix>:{<name>}:queue (list of owners, arrival order)
KEYS[3]  waiters: fair lock waiter leases <prefix>:{<name>}:waiters (zset owner -> lease end, server ms)
KEYS[4]  readers: read-write lock readers <prefix>:{<name>}:readers (zset owner -> lease end, server ms)
KEYS[5]  writers: read-write lock waiting writers <prefix>:{<name>}:writers (zset owner -> lease end, server ms)
KEYS[6]  leases: permit leases <prefix>:{<name>}:leases (zset permit id -> lease end, server ms)
KEYS[7]  holders: permit holders <prefix>:{<name>}:holders (hash permit id -> token)
ARGV[1]  limit: most entries per list, integer from 1 to 10000

Returns {nowMs, types, mainPttl, main, queue, readers, writers, permits}
  nowMs     the server's clock, Unix ms
  types     TYPE of KEYS[1..7] ('none', 'hash', 'string', 'list', 'zset', ...)
  mainPttl  PTTL of KEYS[1]: ms left, -1 without TTL, -2 absent
  main      a hash: {owner, count, token, mode, w, wc, wt, kind} (nil for a
            missing field; kind: the kind of an object whose hash is otherwise
            another kind's); a string: {value}; otherwise {}
  queue     {live, owner1, leaseEnd1, owner2, leaseEnd2, ...}: the live queued
            waiters in arrival order (at most limit of the queue's head)
  readers   {live, owner1, leaseEnd1, count1, token1, ...}: live readers,
            soonest lease end first
  writers   {live, owner1, leaseEnd1, ...}: live waiting writers
  permits   {live, lapsed, id1, leaseEnd1, token1, ...}: live leased permits,
            soonest lease end first; lapsed: leases ended but not yet
            reclaimed (the next script gives them back to the pool)

Publishes nothing.
]]
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local limit = tonumber(ARGV[1])
local live = '(' .. now

local types = {}
for i = 1, 7 do
  types[i] = redis.call('TYPE', KEYS[i])['ok']
end

local main = {}
if types[1] == 'hash' then
  main = redis.call('HMGET', KEYS[1], 'owner', 'count', 'token', 'mode', 'w', 'wc', 'wt', 'kind')
elseif types[1] == 'string' then
  main = {redis.call('GET', KEYS[1])}
end

local queue = {0}
if types[2] == 'list' and types[3] == 'zset' then
  queue[1] = redis.call('ZCOUNT', KEYS[3], live, '+inf')
  -- The queue's head, in arrival order, without the waiters whose lease lapsed.
  for _, owner in ipairs(redis.call('LRANGE', KEYS[2], 0, limit - 1)) do
    local leaseEnd = tonumber(redis.call('ZSCORE', KEYS[3], owner))
    if leaseEnd and leaseEnd > now then
      queue[#queue + 1] = owner
      queue[#queue + 1] = leaseEnd
    end
  end
end

local readers = {0}
if types[4] == 'zset' then
  readers[1] = redis.call('ZCOUNT', KEYS[4], live, '+inf')
  local entries = redis.call('ZRANGEBYSCORE', KEYS[4], live, '+inf', 'WITHSCORES', 'LIMIT', 0, limit)
  for i = 1, #entries, 2 do
    local owner = entries[i]
    local fields = {false, false}
    if types[1] == 'hash' then
      fields = redis.call('HMGET', KEYS[1], 'r:' .. owner, 'rt:' .. owner)
    end
    readers[#readers + 1] = owner
    readers[#readers + 1] = tonumber(entries[i + 1])
    readers[#readers + 1] = fields[1]
    readers[#readers + 1] = fields[2]
  end
end

local writers = {0}
if types[5] == 'zset' then
  writers[1] = redis.call('ZCOUNT', KEYS[5], live, '+inf')
  local entries = redis.call('ZRANGEBYSCORE', KEYS[5], live, '+inf', 'WITHSCORES', 'LIMIT', 0, limit)
  for i = 1, #entries, 2 do
    writers[#writers + 1] = entries[i]
    writers[#writers + 1] = tonumber(entries[i + 1])
  end
end

local permits = {0, 0}
if types[6] == 'zset' then
  permits[1] = redis.call('ZCOUNT', KEYS[6], live, '+inf')
  permits[2] = redis.call('ZCOUNT', KEYS[6], '-inf', now)
  local entries = redis.call('ZRANGEBYSCORE', KEYS[6], live, '+inf', 'WITHSCORES', 'LIMIT', 0, limit)
  for i = 1, #entries, 2 do
    local token = false
    if types[7] == 'hash' then
      token = redis.call('HGET', KEYS[7], entries[i])
    end
    permits[#permits + 1] = entries[i]
    permits[#permits + 1] = tonumber(entries[i + 1])
    permits[#permits + 1] = token
  end
end

return {now, types, redis.call('PTTL', KEYS[1]), main, queue, readers, writers, permits}

--[[
acquire: take or reenter the read or the write lock of a read-write lock.

KEYS[1]  hash: <prefix>:{<name>} (see the rw-state include for its fields)
KEYS[2]  fence: fencing counter of the hash slot <prefix>:{<slot tag>}:fence
KEYS[3]  cancelled: tombstones <prefix>:{<name>}:cancelled (hash; field <owner>:<op>)
KEYS[4]  readers: reader leases <prefix>:{<name>}:readers (zset owner -> lease end, server ms)
KEYS[5]  writers: waiting writers <prefix>:{<name>}:writers (zset owner -> waiter lease end, ms)
ARGV[1]  owner: <clientId>:<taskId>
ARGV[2]  leaseMs: the hold's lease, integer ms (TTL of the hash: max(current, leaseMs))
ARGV[3]  op: operation id of this call, unique per owner
ARGV[4]  mode: 'read' or 'write'
ARGV[5]  waiterLeaseMs: how long a refused writer holds back new readers without trying again, ms
ARGV[6]  join: '1' a refused writer waits (holding back new readers); '0' it does not (tryLock)

Returns
  {1, token, count}  granted: the hold's own token and the owner's count in that
                     mode. Reentry always; a reader while no other owner writes
                     and no live writer waits (unless this owner reads or writes
                     already: a downgrade); the writer when nobody reads or
                     writes. A replay of the hold's last op answers the same.
  {0, waitMs, holder}  refused; waitMs: how long until a retry is worth it
  {-1}               this op was cancelled before it arrived
  {-3}               a writer asked by an owner that only reads: refused at once
                     (waiting would deadlock); nothing changed
  error WRONGTYPE    the key holds another object (a hash without mode, as a lock's
                     hold): nothing changed

Publishes nothing.
]]
--- @include "mint-token"
--- @include "rw-state"

local hash, readers, writers = KEYS[1], KEYS[4], KEYS[5]
local owner, leaseMs, op, mode = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]
local now = nowMs()
local readerCount = purgeRw(hash, readers, writers, now)
local state = redis.call('HMGET', hash, 'mode', 'w', 'wc', 'wt', 'wo', 'r:' .. owner, 'rt:' .. owner, 'ro:' .. owner)
local writer, ownReads = state[2], state[6]
-- Every read-write lock's hash has its mode: one without is another object's (a lock's hold, which is a
-- hash too), refused before anything is written.
if not state[1] and redis.call('EXISTS', hash) == 1 then
  error({err = 'WRONGTYPE the key holds no read-write lock'})
end

if mode == 'write' then
  if writer == owner then
    if state[5] == op then
      return {1, state[4], tonumber(state[3])}
    end
    local count = tonumber(state[3]) + 1
    redis.call('HSET', hash, 'wc', count, 'wo', op)
    extendRw(hash, readers, leaseMs)
    return {1, state[4], count}
  end
  if ownReads then
    return {-3}
  end
else
  if ownReads then
    if state[8] == op then
      return {1, state[7], tonumber(ownReads)}
    end
    local count = tonumber(ownReads) + 1
    redis.call('HSET', hash, 'r:' .. owner, count, 'ro:' .. owner, op)
    local lease = now + leaseMs
    if (tonumber(redis.call('ZSCORE', readers, owner)) or 0) < lease then
      redis.call('ZADD', readers, lease, owner)
    end
    extendRw(hash, readers, leaseMs)
    return {1, state[7], count}
  end
end
if redis.call('HEXISTS', KEYS[3], owner .. ':' .. op) == 1 then
  return {-1}
end

if mode == 'write' then
  if not writer and readerCount == 0 then
    local token = mintToken(KEYS[2])
    redis.call('HSET', hash, 'mode', 'write', 'w', owner, 'wc', 1, 'wt', token, 'wo', op)
    redis.call('ZREM', writers, owner)
    extendRw(hash, readers, leaseMs)
    return {1, token, 1}
  end
  if ARGV[6] == '1' then
    redis.call('ZADD', writers, now + tonumber(ARGV[5]), owner)
    redis.call('PEXPIRE', writers, ARGV[5])
  end
  if writer then
    return {0, redis.call('PTTL', hash), writer}
  end
  -- Readers: the soonest a reader's lease can lapse (they announce when they leave).
  local soonest = redis.call('ZRANGE', readers, 0, 0, 'WITHSCORES')
  return {0, math.max(1, tonumber(soonest[2] or now) - now), ''}
end

-- A new reader.
if writer and writer ~= owner then
  return {0, redis.call('PTTL', hash), writer}
end
if not writer then
  local waiting = redis.call('ZRANGE', writers, 0, 0, 'WITHSCORES')
  if waiting[1] then
    return {0, math.max(1, tonumber(waiting[2]) - now), waiting[1]}
  end
end
local token = mintToken(KEYS[2])
if not writer then
  redis.call('HSET', hash, 'mode', 'read')
end
redis.call('HSET', hash, 'r:' .. owner, 1, 'rt:' .. owner, token, 'ro:' .. owner, op)
redis.call('ZADD', readers, now + leaseMs, owner)
extendRw(hash, readers, leaseMs)
return {1, token, 1}

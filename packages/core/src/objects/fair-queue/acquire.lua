--[[
acquire: take, claim or reenter the fair lock for one owner, in arrival order.

KEYS[1]  lock: hold <prefix>:{<name>} (hash <owner> -> count, t token, o last op; hold-record, as the lock)
KEYS[2]  fence: fencing counter of the lock's hash slot <prefix>:{<slot tag>}:fence
KEYS[3]  cancelled: tombstones <prefix>:{<name>}:cancelled (hash; field <owner>:<op>)
KEYS[4]  queue: waiter queue <prefix>:{<name>}:queue (list of owners, arrival order)
KEYS[5]  waiters: waiter leases <prefix>:{<name>}:waiters (zset owner -> lease end, server ms)
KEYS[6]  tickets: waiter tickets <prefix>:{<name>}:tickets (hash owner -> "<op> <leaseMs>" of the try that set its lease)
ARGV[1]  owner: <clientId>:<taskId>
ARGV[2]  leaseMs: the hold's TTL, integer ms; the TTL becomes max(current, leaseMs)
ARGV[3]  op: operation id of this call, unique per owner; "claim/<token>" counts only the hold
         handed to this owner with that token
ARGV[4]  waiterLeaseMs: how long a queued owner keeps its place without trying again, ms
ARGV[5]  join: '1' joins (or stays in) the queue when refused; '0' never queues (tryLock)
ARGV[6]  handed: token of a hold handed to this owner that its client counts as one without a claim
         (told by a release's reply), or '': a reentry on it counts that one too (count 0 -> 2)
ARGV[7]  once: '1' refuses the owner's second acquisition (it queues like another's) and marks
         the hold (field n), a hand-off's at its claim; '0' counts it (reentrant)

Returns
  {1, token, count}  granted: free and this owner's turn, a reentry (never queues), or a claim
                     (count 0 -> 1); a replay of the last op answers the same, counting once
  {0, waitMs, holder}
                     refused: waitMs until worth trying again (the holder's TTL, or the head's
                     waiter lease when free but another's turn); holder, or '' when free
  {-1}               this op was cancelled before it arrived: nothing changed
  error WRONGTYPE    the key holds anything but a hold: nothing changed

Publishes nothing.
]]
--- @include "mint-token"
--- @include "fair-queue"
--- @include "hold-record"
--- @include "reenter-count"

local lock = KEYS[1]
local held = readHold(lock)
local owner = held and held.owner

local claim = string.sub(ARGV[3], 1, 6) == 'claim/'
-- With the handed-over hold gone, a claim takes, queues and grants nothing.
local mine = owner == ARGV[1] and (not claim or held.token == string.sub(ARGV[3], 7))
if mine and held.op == ARGV[3] then
  return {1, held.token, held.count}
end
if claim and not mine then
  return {0, redis.call('PTTL', lock), owner or ''}
end
if redis.call('HEXISTS', KEYS[3], ARGV[1] .. ':' .. ARGV[3]) == 1 then
  return {-1}
end
if mine then
  -- A hand-off told by a release's reply is held already: with once it is no claim but a second acquisition.
  local handed = held.count == 0 and held.token == ARGV[6]
  -- With once, only the claim of a hand-off (count 0) counts: a second acquisition waits in the queue.
  if ARGV[7] ~= '1' or (held.count == 0 and not handed) then
    if handed then
      redis.call('HINCRBY', lock, owner, 1)
    end
    if ARGV[7] == '1' then
      redis.call('HSET', lock, 'n', '1')
    end
    return reenterCount(lock, held, ARGV[2], ARGV[3])
  end
end

local now = nowMs()
purgeLapsed(KEYS[4], KEYS[5], KEYS[6], now)
-- Whose turn it is matters only to a free lock: a held one refuses anyway.
local head, headLease
if not owner then
  head, headLease = liveHead(KEYS[4], KEYS[5], KEYS[6], now)
  if not head or head == ARGV[1] then
    if head then
      dequeue(KEYS[4], KEYS[5], KEYS[6], ARGV[1])
    end
    local token = mintToken(KEYS[2])
    grantHold(lock, ARGV[1], 1, token, ARGV[3], ARGV[7] == '1', ARGV[2])
    return {1, token, 1}
  end
end

if ARGV[5] == '1' then
  local lease = now + tonumber(ARGV[4])
  if redis.call('ZADD', KEYS[5], lease, ARGV[1]) == 1 then
    redis.call('RPUSH', KEYS[4], ARGV[1])
  end
  redis.call('HSET', KEYS[6], ARGV[1], ARGV[3] .. ' ' .. ARGV[2])
  -- The queue lives as long as its longest waiter lease.
  redis.call('PEXPIRE', KEYS[4], ARGV[4])
  redis.call('PEXPIRE', KEYS[5], ARGV[4])
  redis.call('PEXPIRE', KEYS[6], ARGV[4])
end

if owner then
  return {0, redis.call('PTTL', lock), owner}
end
-- Free, but another owner's turn: worth trying again when its waiter lease ends.
return {0, math.max(1, headLease - now), ''}

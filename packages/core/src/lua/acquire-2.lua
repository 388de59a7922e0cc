--[[
acquire-2: take or reenter the reentrant lock for one owner, in one step.

KEYS[1]  lock hash <prefix>:{<name>}; fields: owner, count, token, op
KEYS[2]  fencing counter of the lock's hash slot <prefix>:{<slot tag>}:fence (string)
ARGV[1]  owner: <clientId>:<taskId>
ARGV[2]  leaseMs: TTL to set, integer ms; the TTL becomes max(current, leaseMs)
ARGV[3]  op: operation id of this call, unique per call

Returns
  {1, token, count}  granted: token is the hold's fencing token (decimal string),
                     count the owner's hold count after this call. A replay of an
                     op already applied to this hold returns the same reply
                     without counting twice.
  {0, pttl, holder}  held by another owner: its remaining TTL in ms (-1: no TTL)
                     and that owner (Redlock tells a majority holder from a split
                     vote by it, without another read).

Free lock: token = max(fence + 1, server TIME in microseconds), so tokens grow per
slot even when a restart or failover lost the counter (while clocks do not run
backwards). TIME is allowed here because scripts replicate their effects.
]]
local lock = KEYS[1]
local held = redis.call('HMGET', lock, 'owner', 'count', 'token', 'op')
local owner = held[1]

if not owner then
  local now = redis.call('TIME')
  local nowUs = tonumber(now[1]) * 1000000 + tonumber(now[2])
  local last = tonumber(redis.call('GET', KEYS[2]) or '0') or 0
  local token = string.format('%.0f', math.max(last + 1, nowUs))
  redis.call('SET', KEYS[2], token)
  redis.call('HSET', lock, 'owner', ARGV[1], 'count', 1, 'token', token, 'op', ARGV[3])
  redis.call('PEXPIRE', lock, ARGV[2])
  return {1, token, 1}
end

if owner == ARGV[1] then
  if held[4] == ARGV[3] then
    return {1, held[3], tonumber(held[2])}
  end
  local count = tonumber(held[2]) + 1
  redis.call('HSET', lock, 'count', count, 'op', ARGV[3])
  if redis.call('PTTL', lock) < tonumber(ARGV[2]) then
    redis.call('PEXPIRE', lock, ARGV[2])
  end
  return {1, held[3], count}
end

return {0, redis.call('PTTL', lock), owner}

--[[
release-2: release one hold (or all of an owner's holds) of the reentrant lock.

KEYS[1]  lock hash <prefix>:{<name>}; fields: owner, count, token, op
KEYS[2]  last full release <prefix>:{<name>}:released (string: op id), so a
         replayed full release still answers "released"
ARGV[1]  owner: <clientId>:<taskId>
ARGV[2]  op: operation id of this call
ARGV[3]  ifOp: release only if the hold's last applied op is this one (cancels an
         acquire whose reply never came); empty string: unconditional
ARGV[4]  all: '1' releases every count of the owner, '0' one count
ARGV[5]  channel to announce a full release on: <prefix>:{<name>}:release
ARGV[6]  publish command: 'PUBLISH' (standalone) or 'SPUBLISH' (Cluster)
ARGV[7]  replayWindowMs: how long KEYS[2] remembers the last full release, ms
ARGV[8]  token: release only the hold with this fencing token; empty: any

Returns
  {1, remaining[, receivers]}
                  released; remaining is the owner's hold count left (0: the key
                  was deleted and 'unlock' published, and receivers is how many
                  subscriber connections got the message). A replay of the last
                  op answers as the first time and changes nothing.
  {-1, exists}    the owner (with that token) does not hold the lock: nothing
                  changed; exists is 1 when the key is there, 0 when it is gone
  {-2}            ifOp given and not the hold's last op: nothing changed
]]
local lock = KEYS[1]
local held = redis.call('HMGET', lock, 'owner', 'count', 'op', 'token')

if held[1] ~= ARGV[1] or (ARGV[8] ~= '' and held[4] ~= ARGV[8]) then
  if redis.call('GET', KEYS[2]) == ARGV[2] then
    return {1, 0}
  end
  if held[1] then
    return {-1, 1}
  end
  return {-1, 0}
end
if held[3] == ARGV[2] then
  return {1, tonumber(held[2])}
end
if ARGV[3] ~= '' and held[3] ~= ARGV[3] then
  return {-2}
end

local count = tonumber(held[2]) - 1
if count > 0 and ARGV[4] ~= '1' then
  redis.call('HSET', lock, 'count', count, 'op', ARGV[2])
  return {1, count}
end

redis.call('DEL', lock)
redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[7])
return {1, 0, redis.call(ARGV[6], ARGV[5], 'unlock')}

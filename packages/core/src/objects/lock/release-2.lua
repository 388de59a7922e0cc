--[[
release-2: release one hold (or all of an owner's holds) of the reentrant lock.

KEYS[1]  lock hash <prefix>:{<name>}; fields owner, count, token, op
KEYS[2]  last full release <prefix>:{<name>}:released (string: <owner>:<op>), so
         a replayed full release still answers "released"
ARGV[1]  owner: <clientId>:<taskId>
ARGV[2]  op: operation id of this call
ARGV[3]  all: '1' releases every count of the owner, '0' one count
ARGV[4]  token: release only the hold with this fencing token; '' any
ARGV[5]  replayWindowMs: how long KEYS[2] remembers the last full release, ms
ARGV[6]  sharded: '1' announces with SPUBLISH (Cluster), '0' with PUBLISH

Returns
  {1, remaining, receivers}
              released; remaining is the owner's hold count left. At 0 the key
              was deleted and 'unlock' published on <prefix>:{<name>}:release,
              and receivers is how many subscriber connections got it (0 on a
              replay). A replay of the hold's last op answers as the first time
              and changes nothing.
  {-1, exists}
              the owner (with that token) does not hold the lock: nothing
              changed; exists is 1 when the key is there, 0 when it is gone.

Publishes 'unlock' on <prefix>:{<name>}:release when the count reaches 0.
]]
--- @include "announce"

local lock = KEYS[1]
local held = redis.call('HMGET', lock, 'owner', 'count', 'op', 'token')

if held[1] ~= ARGV[1] or (ARGV[4] ~= '' and held[4] ~= ARGV[4]) then
  if redis.call('GET', KEYS[2]) == ARGV[1] .. ':' .. ARGV[2] then
    return {1, 0, 0}
  end
  if held[1] then
    return {-1, 1}
  end
  return {-1, 0}
end
if held[3] == ARGV[2] then
  return {1, tonumber(held[2]), 0}
end

local count = tonumber(held[2]) - 1
if count > 0 and ARGV[3] ~= '1' then
  redis.call('HSET', lock, 'count', count, 'op', ARGV[2])
  return {1, count, 0}
end

redis.call('DEL', lock)
redis.call('SET', KEYS[2], ARGV[1] .. ':' .. ARGV[2], 'PX', ARGV[5])
return {1, 0, announce(lock .. ':release', 'unlock', ARGV[6])}

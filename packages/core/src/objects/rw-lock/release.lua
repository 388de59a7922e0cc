--[[
release: release one count (or all) of an owner's hold in one mode.

KEYS[1]  hash: <prefix>:{<name>} (see the rw-state include)
KEYS[2]  released: last full release <prefix>:{<name>}:released (string: <owner>:<op>)
KEYS[3]  readers: reader leases <prefix>:{<name>}:readers (zset)
KEYS[4]  writers: waiting writers <prefix>:{<name>}:writers (zset)
ARGV[1]  owner: <clientId>:<taskId>
ARGV[2]  op: operation id of this call
ARGV[3]  mode: 'read' or 'write'
ARGV[4]  all: '1' releases every count of the owner in that mode, '0' one count
ARGV[5]  token: release only the hold with this token; '' any
ARGV[6]  replayWindowMs: how long `released` remembers the last full release, ms
ARGV[7]  sharded: '1' announces with SPUBLISH (Cluster), '0' with PUBLISH
ARGV[8]  channel: the lock's channel <prefix>:{<name>}:release (keys.ts)

Returns
  {1, remaining, receivers}  released; remaining: the owner's count left in that
                             mode; receivers: subscriber connections reached
  {-1, exists}               not held by this owner in that mode (with that
                             token): nothing changed

Publishes 'unlock' on `channel` when others may now enter: the writer left, or
the last reader did.
]]
--- @include "rw-state"
--- @include "announce"

local hash, readers = KEYS[1], KEYS[3]
local owner, op, mode = ARGV[1], ARGV[2], ARGV[3]
purgeRw(hash, readers, KEYS[4], nowMs())
local countField, tokenField, opField
if mode == 'write' then
  if redis.call('HGET', hash, 'w') ~= owner then
    countField = nil
  else
    countField, tokenField, opField = 'wc', 'wt', 'wo'
  end
else
  countField, tokenField, opField = 'r:' .. owner, 'rt:' .. owner, 'ro:' .. owner
end
local held = countField and redis.call('HMGET', hash, countField, tokenField, opField) or {}

if not held[1] or (ARGV[5] ~= '' and held[2] ~= ARGV[5]) then
  if redis.call('GET', KEYS[2]) == owner .. ':' .. op then
    return {1, 0, 0}
  end
  return {-1, redis.call('EXISTS', hash)}
end
if held[3] == op then
  return {1, tonumber(held[1]), 0}
end

local count = tonumber(held[1]) - 1
if count > 0 and ARGV[4] ~= '1' then
  redis.call('HSET', hash, countField, count, opField, op)
  return {1, count, 0}
end

redis.call('SET', KEYS[2], owner .. ':' .. op, 'PX', ARGV[6])
if dropRwHold(hash, readers, owner, mode) then
  return {1, 0, announce(ARGV[8], 'unlock', ARGV[7])}
end
return {1, 0, 0}

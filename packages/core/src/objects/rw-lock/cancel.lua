--[[
cancel: undo an acquire whose reply came too late, was aborted, or never
came, and refuse it if it arrives after this.

KEYS[1]  hash: <prefix>:{<name>} (see the rw-state include)
KEYS[2]  released: last full release <prefix>:{<name>}:released (string: <owner>:<op>)
KEYS[3]  cancelled: tombstones <prefix>:{<name>}:cancelled (hash; field <owner>:<acquire op>)
KEYS[4]  readers: reader leases <prefix>:{<name>}:readers (zset)
KEYS[5]  writers: waiting writers <prefix>:{<name>}:writers (zset)
ARGV[1]  owner: <clientId>:<taskId>
ARGV[2]  op: operation id of this cancel
ARGV[3]  acquireOp: the op of the acquire to undo
ARGV[4]  mode: 'read' or 'write'
ARGV[5]  replayWindowMs: how long `released` and `cancelled` live after this call, ms
ARGV[6]  sharded: '1' announces with SPUBLISH (Cluster), '0' with PUBLISH
ARGV[7]  channel: the lock's channel <prefix>:{<name>}:release (keys.ts)

Returns 1 if the acquire had run and is undone (one count), 0 if not.

Publishes 'unlock' on `channel` when the undo frees the lock for others.
]]
--- @include "rw-state"
--- @include "announce"

local hash, readers = KEYS[1], KEYS[4]
local owner, mode = ARGV[1], ARGV[4]
redis.call('HSET', KEYS[3], owner .. ':' .. ARGV[3], '1')
redis.call('PEXPIRE', KEYS[3], ARGV[5])
purgeRw(hash, readers, KEYS[5], nowMs())
local countField, opField = 'r:' .. owner, 'ro:' .. owner
if mode == 'write' then
  if redis.call('HGET', hash, 'w') ~= owner then
    return 0
  end
  countField, opField = 'wc', 'wo'
end
local held = redis.call('HMGET', hash, countField, opField)
if not held[1] or held[2] ~= ARGV[3] then
  return 0
end
local count = tonumber(held[1]) - 1
if count > 0 then
  redis.call('HSET', hash, countField, count, opField, ARGV[2])
  return 1
end
local opened = dropRwHold(hash, readers, owner, mode)
if opened == 'free' then
  redis.call('SET', KEYS[2], owner .. ':' .. ARGV[2], 'PX', ARGV[5])
end
if opened then
  announce(ARGV[7], 'unlock', ARGV[6])
end
return 1

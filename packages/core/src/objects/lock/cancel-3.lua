--[[
cancel-3: undo an acquire whose reply came too late, was aborted, or never came.

The acquire may have run, may still be on its way (ioredis resends a command
after a reconnect), or may never arrive. Either way it must leave no hold: if it
ran and is the hold's last op, one count (or every count) of the owner is
released; and a tombstone refuses the acquire if it arrives after this.

KEYS[1]  lock hash <prefix>:{<name>}; fields owner, count, token, op
KEYS[2]  last full release <prefix>:{<name>}:released (string: <owner>:<op>)
KEYS[3]  tombstones <prefix>:{<name>}:cancelled (hash; field <owner>:<acquire op>)
ARGV[1]  owner: <clientId>:<taskId>
ARGV[2]  op: operation id of this cancel
ARGV[3]  acquireOp: the op of the acquire to undo
ARGV[4]  all: '1' releases every count of the owner, '0' one count
ARGV[5]  replayWindowMs: how long KEYS[2] and KEYS[3] live after this call, ms
ARGV[6]  sharded: '1' announces with SPUBLISH (Cluster), '0' with PUBLISH

Returns
  1  the acquire had run and is undone
  0  it had not run (or is not the hold's last op): the tombstone refuses it
     (every tombstone goes when the hash's TTL, renewed by each cancel, runs out)

Publishes 'unlock' on <prefix>:{<name>}:release when the undo frees the lock.
]]
--- @include "announce"

local lock = KEYS[1]
redis.call('HSET', KEYS[3], ARGV[1] .. ':' .. ARGV[3], '1')
redis.call('PEXPIRE', KEYS[3], ARGV[5])
local held = redis.call('HMGET', lock, 'owner', 'count', 'op')
if held[1] ~= ARGV[1] or held[3] ~= ARGV[3] then
  return 0
end

local count = tonumber(held[2]) - 1
if count > 0 and ARGV[4] ~= '1' then
  redis.call('HSET', lock, 'count', count, 'op', ARGV[2])
  return 1
end

redis.call('DEL', lock)
redis.call('SET', KEYS[2], ARGV[1] .. ':' .. ARGV[2], 'PX', ARGV[5])
announce(lock .. ':release', 'unlock', ARGV[6])
return 1

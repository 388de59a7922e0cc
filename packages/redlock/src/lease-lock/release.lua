--[[
release: release a lease lock held by one owner, and wake its waiters.

KEYS[1]  lock: string <prefix>:{<name>}: <owner>|<op>
KEYS[2]  released: last release <prefix>:{<name>}:released (string: <owner>|<release op>),
         so a replayed release still answers "released"
ARGV[1]  owner: <clientId>:<taskId>
ARGV[2]  token: the op of the acquire that holds it; '' releases the owner's
         hold whatever its op (sweeping a grant whose reply has not come)
ARGV[3]  op: operation id of this release
ARGV[4]  replayWindowMs: how long `released` remembers this release, ms
ARGV[5]  channel: the lock's channel <prefix>:{<name>}:release (core's lock/keys.ts)

Returns
  n >= 0  released: the key was deleted and 'unlock' published on
          <prefix>:{<name>}:release; n subscriber connections got it (0 on a
          replay, which changes nothing)
  -1      not held by the owner (with that token), and the key is gone
  -2      not held by the owner (with that token): another holds it

Publishes 'unlock' on `channel` when it deletes the key. A
Redlock master is one standalone server, so this is always PUBLISH.
]]
--- @include "announce"

local held = redis.call('GET', KEYS[1])
local prefix = ARGV[1] .. '|'
local mine = held ~= false and (held == prefix .. ARGV[2] or (ARGV[2] == '' and string.sub(held, 1, #prefix) == prefix))
if not mine then
  if redis.call('GET', KEYS[2]) == prefix .. ARGV[3] then
    return 0
  end
  return held and -2 or -1
end
redis.call('DEL', KEYS[1])
redis.call('SET', KEYS[2], prefix .. ARGV[3], 'PX', ARGV[4])
return announce(ARGV[5], 'unlock', '0')

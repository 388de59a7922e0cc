--[[
release-2: release one hold (or all of an owner's holds) of the reentrant lock.

KEYS[1]  lock: hash <prefix>:{<name>}; fields owner, count, token, op
KEYS[2]  released: last full release <prefix>:{<name>}:released (string: <owner>:<op>), so
         a replayed full release still answers "released"
ARGV[1]  owner: <clientId>:<taskId>
ARGV[2]  op: operation id of this call
ARGV[3]  all: '1' releases every count of the owner, '0' one count
ARGV[4]  token: release only the hold with this fencing token; '' any
ARGV[5]  replayWindowMs: how long `released` remembers the last full release, ms
ARGV[6]  sharded: '1' announces with SPUBLISH (Cluster), '0' with PUBLISH
ARGV[7]  channel: the lock's channel <prefix>:{<name>}:release (keys.ts)

Returns
  {1, remaining, receivers}
              released; remaining is the owner's hold count left. At 0 the key
              was deleted and 'unlock' published on `channel`,
              and receivers is how many subscriber connections got it (0 on a
              replay). A replay of the hold's last op answers as the first time
              and changes nothing.
  {-1, exists}
              the owner (with that token) does not hold the lock: nothing
              changed; exists is 1 when the key is there, 0 when it is gone.

Publishes 'unlock' on `channel` when the count reaches 0.
]]
--- @include "announce"
--- @include "release-count"

local lock, released = KEYS[1], KEYS[2]
local owner, op, all, token, replayWindowMs, sharded, channel = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7]
local stays = releaseCount(lock, released, owner, op, all, token, replayWindowMs)
if stays then
  return stays
end
return {1, 0, announce(channel, 'unlock', sharded)}

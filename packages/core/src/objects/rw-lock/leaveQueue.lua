--[[
leaveQueue: a waiting writer gives up (timed out, aborted) and stops holding
back new readers.

KEYS[1]  writers: waiting writers <prefix>:{<name>}:writers (zset)
ARGV[1]  owner: <clientId>:<taskId>
ARGV[2]  sharded: '1' announces with SPUBLISH (Cluster), '0' with PUBLISH
ARGV[3]  channel: the lock's channel <prefix>:{<name>}:release (keys.ts)

Returns 1 if it was waiting, 0 if not.

Publishes 'unlock' on `channel` when it was the last waiting writer and readers
may enter now.
]]
--- @include "announce"

if redis.call('ZREM', KEYS[1], ARGV[1]) == 0 then
  return 0
end
if redis.call('ZCARD', KEYS[1]) == 0 then
  announce(ARGV[3], 'unlock', ARGV[2])
end
return 1

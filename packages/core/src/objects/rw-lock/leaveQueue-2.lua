--[[
leaveQueue-2: a waiting writer gives up (timed out, aborted): it stops holding
back new readers, in one step.

KEYS[1]  hash: <prefix>:{<name>}
KEYS[2]  writers: waiting writers <prefix>:{<name>}:writers (zset)
ARGV[1]  owner: <clientId>:<taskId>
ARGV[2]  sharded: '1' announces with SPUBLISH (Cluster), '0' with PUBLISH

Returns 1 if it was waiting, 0 if not.

Publishes 'unlock' on <prefix>:{<name>}:release when it was the last waiting
writer and readers may enter now.
]]
--- @include "announce"

if redis.call('ZREM', KEYS[2], ARGV[1]) == 0 then
  return 0
end
if redis.call('ZCARD', KEYS[2]) == 0 then
  announce(KEYS[1] .. ':release', 'unlock', ARGV[2])
end
return 1

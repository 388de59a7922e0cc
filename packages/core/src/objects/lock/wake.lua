--[[
wake: a client woken by a release had no task left to take the lock, so the next waiting
client is woken instead, if the lock is still free.

KEYS[1]  lock: hold <prefix>:{<name>} (hash <owner> -> count, t, o, n; hold-record)
KEYS[2]  clients: waiting clients <prefix>:{<name>}:clients (zset; wake-client)
ARGV[1]  clientId: the client passing the wake on (taken out of `clients`)
ARGV[2]  sharded: '1' announces with SPUBLISH (Cluster), '0' with PUBLISH

Returns how many subscribers heard the wake (0: the lock is held, or nobody else waits).

Publishes 'unlock' to the client it wakes, on <prefix>:{<name>}:release: followed by its client id.
]]
--- @include "announce"
--- @include "wake-client"

local lock, clients = KEYS[1], KEYS[2]
local clientId, sharded = ARGV[1], ARGV[2]
redis.call('ZREM', clients, clientId)
if redis.call('EXISTS', lock) == 1 then
  return 0
end
return wakeClient(clients, lock, sharded)

--[[
wake-2: pass a wake on: a client woken by a release had no task left to take
the lock (its waiter gave up, or left as the wake came), so the next waiting
client is woken instead, if the lock is still free.

KEYS[1]  lock: hold <prefix>:{<name>} (string "<head> <token> <owner>", hold-record)
KEYS[2]  clients: waiting clients <prefix>:{<name>}:clients (zset client id -> when it
         registered, us; see wake-client)
ARGV[1]  clientId: the client passing the wake on (taken out of `clients`)
ARGV[2]  sharded: '1' announces with SPUBLISH (Cluster), '0' with PUBLISH
ARGV[3]  wakePrefix: <prefix>:{<name>}:release: (a client's wake channel is this plus
         its client id; keys.ts)

Returns how many subscriber connections heard the wake (0: the lock is held,
whose release wakes the next, or nobody else waits).

Publishes 'unlock' on `wakePrefix` .. <client id> of the client it wakes.
]]
--- @include "announce"
--- @include "wake-client"

local lock, clients = KEYS[1], KEYS[2]
local clientId, sharded, wakePrefix = ARGV[1], ARGV[2], ARGV[3]
redis.call('ZREM', clients, clientId)
if redis.call('EXISTS', lock) == 1 then
  return 0
end
return wakeClient(clients, wakePrefix, sharded)

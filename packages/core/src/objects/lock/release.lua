--[[
release: release one hold (or all of an owner's holds) of the reentrant lock.

KEYS[1]  lock: hold <prefix>:{<name>} (hash <owner> -> count, t, o, n; hold-record)
KEYS[2]  released: last full release <prefix>:{<name>}:released (string: <owner>:<op>), so
         a replayed full release still answers "released"
KEYS[3]  clients: waiting clients <prefix>:{<name>}:clients (zset; wake-client)
ARGV[1]  owner: <clientId>:<taskId>
ARGV[2]  op: operation id of this call
ARGV[3]  all: '1' releases every count of the owner, '0' one count
ARGV[4]  token: release only the hold with this fencing token; '' any
ARGV[5]  replayWindowMs: how long `released` remembers the last full release, ms
ARGV[6]  sharded: '1' announces with SPUBLISH (Cluster), '0' with PUBLISH
ARGV[7]  wakePrefix: <prefix>:{<name>}:release: (plus a client id: its wake channel)
ARGV[8]  waiting: '1' when other tasks of the owner's client wait on this lock
ARGV[9]  clientsTtlMs: how long `clients` lives after a registration, ms

Returns
  {1, remaining, receivers}  released; remaining is the owner's count left. At 0 the key is
              deleted and one waiting client woken; receivers: subscribers that heard it
              (0 when nobody waits, and on a replay, which changes nothing).
  {-1, exists}  the owner (with that token) does not hold it; exists: 1 key there, 0 gone.

Publishes 'unlock' to the client it wakes at count 0. With `waiting` the owner's client
registers first, behind the others: its waiters get the lock when no other client waits.
]]
--- @include "announce"
--- @include "wake-client"
--- @include "release-count"

local lock, released, clients = KEYS[1], KEYS[2], KEYS[3]
local owner, op, all, token, replayWindowMs, sharded, wakePrefix, waiting, clientsTtlMs =
  ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9]
local stays = releaseCount(lock, released, owner, op, all, token, replayWindowMs)
if stays then
  return stays
end
if waiting == '1' then
  registerClient(clients, clientOf(owner), clientsTtlMs, '1')
end
return {1, 0, wakeClient(clients, wakePrefix, sharded)}

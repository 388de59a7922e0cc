--[[
release: release one hold (or all of an owner's holds) of the reentrant lock.

KEYS[1]  lock: hold <prefix>:{<name>} (hash <owner> -> count, t, o, n; hold-record)
KEYS[2]  released: last full release <prefix>:{<name>}:released (string: <owner>:<op>), so
         a replayed full release still answers "released"
KEYS[3]  clients: waiting clients <prefix>:{<name>}:clients (zset; register-client, wake-client)
ARGV[1]  owner: <clientId>:<taskId>
ARGV[2]  op: operation id of this call
ARGV[3]  all: '1' releases every count of the owner, '0' one count
ARGV[4]  token: release only the hold with this fencing token; '' any
ARGV[5]  replayWindowMs: how long `released` remembers the last full release, ms
ARGV[6]  sharded: '1' announces with SPUBLISH (Cluster), '0' with PUBLISH
ARGV[7]  requeueTtlMs: '0' when no other task of the owner's client waits on this lock; else
         they do, and the client registers in `clients`, which lives this long after it, ms

Returns
  receivers   released, no count left (an integer): the key is deleted and one waiting client
              woken; receivers: subscribers that heard it (0 when nobody waits, and on a replay,
              which changes nothing). An integer, not an array: Redis converts a Lua table reply
              at several times the cost, and this is the reply of every uncontended release.
  {1, remaining, receivers}  released one count, `remaining` left (receivers 0).
  {-1, exists}  the owner (with that token) does not hold it; exists: 1 key there, 0 gone.

Publishes 'unlock' to the client it wakes at count 0, on the lock key's wake prefix
<prefix>:{<name>}:release: followed by the client id. With `requeueTtlMs` the owner's client
registers first, behind the others: its waiters get the lock when no other client waits.
]]
--- @include "lock-release"

return releaseLock(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7])

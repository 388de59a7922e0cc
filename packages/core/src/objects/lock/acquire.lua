--[[
acquire: take or reenter the reentrant lock for one owner, in one step.

KEYS[1]  lock: hold <prefix>:{<name>} (hash <owner> -> count, t token, o last op, n; hold-record)
KEYS[2]  fence: fencing counter of the lock's hash slot <prefix>:{<slot tag>}:fence (string)
KEYS[3]  cancelled: tombstones <prefix>:{<name>}:cancelled (hash; field <owner>:<op>) of cancel.lua
KEYS[4]  clients: waiting clients <prefix>:{<name>}:clients (zset client id -> registered at, us;
         register-client)
ARGV[1]  owner: <clientId>:<taskId>
ARGV[2]  leaseMs: TTL to set, integer ms; the TTL becomes max(current, leaseMs)
ARGV[3]  op: operation id of this call, unique per owner
ARGV[4]  once: '1' refuses the owner's second acquisition and marks the hold (field n); '0' counts it
ARGV[5]  waitTtlMs: '0' when the caller does not wait if refused; else it waits, its client is
         registered in `clients`, and the zset lives this long after it, ms

Returns
  token              granted a free lock: the fencing token (decimal string), count 1. A bulk
                     string, not an array: Redis converts a Lua table reply at several times the
                     cost, and this is the reply of every uncontended acquire.
  {1, token, count}  granted a reentry: the token and the owner's count. A replay of the hold's
                     last op answers as its first run did (count 1: the token), without counting
                     twice (one owner has at most one op in flight per lock, so the last op is
                     enough).
  {0, pttl, holder}  held by another: its TTL in ms (-1: none) and owner. With `waitTtlMs` the
                     client is registered in `clients` (keeping its place), woken in its turn.
  {-1}               this op was cancelled before it arrived: nothing changed.

Publishes nothing.
]]
--- @include "lock-acquire"

return acquireLock(KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5])

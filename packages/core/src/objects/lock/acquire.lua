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
--- @include "register-client"
--- @include "mint-token"
--- @include "hold-record"
--- @include "reenter-count"

local lock, cancelled, owner, op = KEYS[1], KEYS[3], ARGV[1], ARGV[3]
-- One EXISTS for the hold and the tombstones: the common acquire finds neither, and a free key needs no
-- hash read or parse (readHold's HGETALL and field checks cost several times as much).
local present = redis.call('EXISTS', lock, cancelled)
local held = present > 0 and readHold(lock)
local once = ARGV[4] == '1'

if not held or held.owner == owner then
  if held and held.op == op then
    if held.count == 1 then
      return held.token
    end
    return {1, held.token, held.count}
  end
  -- An acquire can arrive after its cancel: sent on a connection that broke (its bytes may still reach
  -- Redis after the cancel on a new one) or redirected in a Cluster. The tombstone refuses it. The
  -- tombstones' hash exists only within a replay window after a cancel (the EXISTS above counted it).
  if present > (held and 1 or 0) and redis.call('HEXISTS', cancelled, owner .. ':' .. op) == 1 then
    return {-1}
  end
  if not held then
    local token = mintToken(KEYS[2])
    grantHold(lock, owner, 1, token, op, once, ARGV[2])
    return token
  end
  -- Decided here: only Redis sees two branches of one task one after the other.
  if not once then
    return reenterCount(lock, held, ARGV[2], op)
  end
end

-- Refused (held by another, or a second acquisition of a `once` hold): the caller's client waits, and
-- hears of the release in its turn.
local waitTtlMs = ARGV[5]
if waitTtlMs ~= '0' then
  registerClient(KEYS[4], owner, waitTtlMs, '0')
end
return {0, redis.call('PTTL', lock), held.owner}

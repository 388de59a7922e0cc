--[[
acquire: take or reenter the reentrant lock for one owner, in one step.

KEYS[1]  lock: hold <prefix>:{<name>} (hash <owner> -> count, t token, o last op, n; hold-record)
KEYS[2]  fence: fencing counter of the lock's hash slot <prefix>:{<slot tag>}:fence (string)
KEYS[3]  cancelled: tombstones <prefix>:{<name>}:cancelled (hash; field <owner>:<op>) of cancel.lua
KEYS[4]  clients: waiting clients <prefix>:{<name>}:clients (zset client id -> registered at, us;
         wake-client)
ARGV[1]  owner: <clientId>:<taskId>
ARGV[2]  leaseMs: TTL to set, integer ms; the TTL becomes max(current, leaseMs)
ARGV[3]  op: operation id of this call, unique per owner
ARGV[4]  once: '1' refuses the owner's second acquisition and marks the hold (field n); '0'
         counts it (reentrant)
ARGV[5]  clientsTtlMs: how long `clients` lives after a registration, ms
ARGV[6]  waits: '1' when the caller waits if refused (registers its client), '0' not

Returns
  {1, token, count}  granted: the fencing token (decimal) and the owner's count. A replay of the
                     hold's last op answers the same without counting twice (one owner has at
                     most one op in flight per lock, so the last op is enough).
  {0, pttl, holder}  held by another: its TTL in ms (-1: none) and owner. With `waits` the
                     client is registered in `clients` (keeping its place), woken in its turn.
  {-1}               this op was cancelled before it arrived: nothing changed.

Publishes nothing.
]]
--- @include "announce"
--- @include "wake-client"
--- @include "mint-token"
--- @include "hold-record"
--- @include "reenter-count"

local lock, clients = KEYS[1], KEYS[4]
local held = readHold(lock)
local owner = held and held.owner

-- A refusal: the caller's client waits, and hears of the release in its turn.
local function refuse()
  if ARGV[6] == '1' then
    registerClient(clients, clientOf(ARGV[1]), ARGV[5], '0')
  end
  return {0, redis.call('PTTL', lock), owner}
end

if owner and owner ~= ARGV[1] then
  return refuse()
end
if owner and held.op == ARGV[3] then
  return {1, held.token, held.count}
end
if redis.call('HEXISTS', KEYS[3], ARGV[1] .. ':' .. ARGV[3]) == 1 then
  return {-1}
end

if not owner then
  local token = mintToken(KEYS[2])
  grantHold(lock, ARGV[1], 1, token, ARGV[3], ARGV[4] == '1', ARGV[2])
  return {1, token, 1}
end
-- Decided here: only Redis sees two branches of one task one after the other.
if ARGV[4] == '1' then
  return refuse()
end

return reenterCount(lock, held, ARGV[2], ARGV[3])

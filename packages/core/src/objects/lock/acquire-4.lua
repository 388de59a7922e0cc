--[[
acquire-4: take or reenter the reentrant lock for one owner, in one step.

KEYS[1]  lock: hold <prefix>:{<name>} (string "<head> <token> <owner>", hold-record)
KEYS[2]  fence: fencing counter of the lock's hash slot <prefix>:{<slot tag>}:fence (string)
KEYS[3]  cancelled: tombstones <prefix>:{<name>}:cancelled (hash; field <owner>:<op>), left by
         cancel-4 when it cancelled an op before the op reached Redis
KEYS[4]  clients: waiting clients <prefix>:{<name>}:clients (zset client id -> when it
         registered, us; see wake-client): a refused try registers its client
ARGV[1]  owner: <clientId>:<taskId>
ARGV[2]  leaseMs: TTL to set, integer ms; the TTL becomes max(current, leaseMs)
ARGV[3]  op: operation id of this call, unique per owner
ARGV[4]  kind: '' (or absent) the reentrant lock; 'nonReentrantLock' refuses the
         owner's second acquisition as if another held it, and marks the hold's op ('!')
ARGV[5]  clientsTtlMs: how long `clients` lives after a registration, ms
ARGV[6]  waits: '1' when the caller waits if refused (registers its client), '0' not

Returns
  {1, token, count}  granted: token is the hold's fencing token (decimal string),
                     count the owner's hold count after this call. A replay of
                     the hold's last op (ioredis resends after a reconnect)
                     returns the same reply without counting twice; only the
                     last op is recognised, which is enough because one owner
                     has at most one operation in flight per lock.
  {0, pttl, holder}  held by another owner: its remaining TTL in ms (-1: no
                     TTL) and that owner. With `waits` the owner's client is
                     registered in `clients` (keeping its place if it is
                     there), so a release wakes it in its turn.
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
  writeHold(lock, ARGV[1], 1, token36(token), ARGV[3], ARGV[4] == 'nonReentrantLock', ARGV[2])
  return {1, token, 1}
end
-- Decided here, not in the client: two branches of one task may both be on
-- their way, and only Redis sees them one after the other.
if ARGV[4] == 'nonReentrantLock' then
  return refuse()
end

return reenterCount(lock, held, ARGV[2], ARGV[3])

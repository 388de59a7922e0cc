--[[
renew: extend the leases of a batch of holds on one server and hash slot.

KEYS[2i-1]  hash: of hold i, <prefix>:{<name>}
KEYS[2i]    readers: its reader leases, <prefix>:{<name>}:readers (zset)
ARGV[4i-3]  owner: the owner of hold i
ARGV[4i-2]  token: its token
ARGV[4i-1]  leaseMs: its lease, ms (TTL of the hash: max(current, leaseMs))
ARGV[4i]    mode: 'read' (its own lease in the zset) or 'write'

Returns one integer per hold, in order:
   1  renewed
   0  gone: the owner holds nothing in that mode (never recreated here)
  -1  taken: it holds it with another token

Publishes nothing.
]]
--- @include "rw-state"

local now = nowMs()
local results = {}
for i = 1, #KEYS / 2 do
  local hash, readers = KEYS[2 * i - 1], KEYS[2 * i]
  local owner, token, leaseMs, mode = ARGV[4 * i - 3], ARGV[4 * i - 2], tonumber(ARGV[4 * i - 1]), ARGV[4 * i]
  local held
  if mode == 'write' then
    held = redis.call('HMGET', hash, 'w', 'wt')
    if held[1] ~= owner then
      held = {nil, nil}
    end
  else
    held = redis.call('HMGET', hash, 'r:' .. owner, 'rt:' .. owner)
    local lease = tonumber(redis.call('ZSCORE', readers, owner))
    if held[1] and (not lease or lease <= now) then
      held = {nil, nil}
    end
  end
  if not held[1] then
    results[i] = 0
  elseif held[2] ~= token then
    results[i] = -1
  else
    if mode == 'read' then
      redis.call('ZADD', readers, 'GT', now + leaseMs, owner)
    end
    extendRw(hash, readers, leaseMs)
    results[i] = 1
  end
end
return results

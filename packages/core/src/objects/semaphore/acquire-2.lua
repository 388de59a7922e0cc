--[[
acquire-2: take `count` permits of the semaphore if that many are available,
in one step. Permits are not owned: nothing records who took them.

KEYS[1]  permits: <prefix>:{<name>} (string: available permits, an integer that
         addPermits may have made negative; absent: 0, not set yet)
KEYS[2]  marker: op marker <prefix>:{<name>}:op:<clientId>:<op> (string), written when
         the op is granted ('acquired') or cancelled ('cancelled'), so a replay
         answers its first outcome and an op cancelled before it arrived is refused
ARGV[1]  count: how many to take, integer from 1 to 2^31-1
ARGV[2]  replayWindowMs: how long the marker lives, integer ms

Returns
  {1, available}  granted; available is what is left now. A replay of a granted
                  op answers 1 again and takes nothing.
  {0, available}  fewer than `count` available: nothing changed.
  {-1}            the op was cancelled (cancel-2) before it arrived: nothing changed.

Publishes nothing.
]]
local done = redis.call('GET', KEYS[2])
if done == 'acquired' then
  return {1, tonumber(redis.call('GET', KEYS[1]) or '0')}
end
if done then
  return {-1}
end

local available = tonumber(redis.call('GET', KEYS[1]) or '0')
local count = tonumber(ARGV[1])
if available < count then
  return {0, available}
end
redis.call('DECRBY', KEYS[1], count)
redis.call('SET', KEYS[2], 'acquired', 'PX', ARGV[2])
return {1, available - count}

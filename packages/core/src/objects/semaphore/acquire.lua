--[[
acquire: take `count` permits if that many are available. Permits are not
owned: nothing records who took them.

KEYS[1]  permits: <prefix>:{<name>} (string: available permits, may be negative; absent: 0)
KEYS[2]  marker: op marker <prefix>:{<name>}:op:<clientId>:<op> (string 'acquired' or
         'cancelled'), so a replay answers its first outcome and a cancelled op is refused
ARGV[1]  count: how many to take, integer from 1 to 2^31-1
ARGV[2]  replayWindowMs: how long the marker lives, integer ms

Returns
  {1, available}  granted (a replay takes nothing again); available: what is left
  {0, available}  fewer than `count` available: nothing changed
  {-1}            cancelled (cancel.lua) before it arrived: nothing changed

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

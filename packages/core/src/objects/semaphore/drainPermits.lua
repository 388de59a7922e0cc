--[[
drainPermits: take every available permit: the count becomes 0 (a negative
one too, taking nothing); an unset semaphore stays unset.

KEYS[1]  permits: <prefix>:{<name>} (string)
KEYS[2]  marker: op marker <prefix>:{<name>}:op:<clientId>:<op> (string: how many this
         op took), so a replay answers its first outcome
ARGV[1]  replayWindowMs: how long the marker lives, integer ms

Returns how many permits were taken (0 or more).

Publishes nothing.
]]
local done = redis.call('GET', KEYS[2])
if done then
  return tonumber(done)
end
local current = redis.call('GET', KEYS[1])
local drained = 0
if current then
  drained = math.max(tonumber(current), 0)
  redis.call('SET', KEYS[1], 0)
end
redis.call('SET', KEYS[2], drained, 'PX', ARGV[1])
return drained

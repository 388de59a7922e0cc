--[[
cancel: undo the acquire of permit `id` (reply too late, aborted, or no
answer). If it ran the permit goes back; either way its marker says
'cancelled', so a late arrival is refused. Lapsed permits are reclaimed first.

KEYS[1]  permits: <prefix>:{<name>} (string)
KEYS[2]  leases: <prefix>:{<name>}:leases (sorted set: id -> lease end, ms)
KEYS[3]  holders: <prefix>:{<name>}:holders (hash: id -> token)
KEYS[4]  marker: marker of the permit <prefix>:{<name>}:permit:<id> (string)
ARGV[1]  id: the permit's id
ARGV[2]  replayWindowMs: how long the marker lives, integer ms
ARGV[3]  sharded: '1' announces with SPUBLISH (Cluster), '0' with PUBLISH
ARGV[4]  channel: the semaphore's channel <prefix>:{<name>}:permits (keys.ts)

Returns 1 when the acquire had run and the permit is back, 0 when it had not.

Publishes '<came back>:<available>' on `channel` when permits came back and
some are available.
]]
--- @include "announce"
--- @include "reclaim-permits"

local _, reclaimed = reclaimPermits(KEYS[1], KEYS[2], KEYS[3])
local undone = 0
if redis.call('HDEL', KEYS[3], ARGV[1]) == 1 then
  redis.call('ZREM', KEYS[2], ARGV[1])
  redis.call('INCR', KEYS[1])
  undone = 1
end
redis.call('SET', KEYS[4], 'cancelled', 'PX', ARGV[2])
if undone + reclaimed > 0 then
  local available = tonumber(redis.call('GET', KEYS[1]) or '0')
  if available > 0 then
    announce(ARGV[4], (undone + reclaimed) .. ':' .. available, ARGV[3])
  end
end
return undone

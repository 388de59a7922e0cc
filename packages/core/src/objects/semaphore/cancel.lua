--[[
cancel: undo an acquire that was aborted, closed or got no answer. It may
have run, be on its way (ioredis resends after a reconnect) or never arrive: if
it ran its permits go back; either way its marker says 'cancelled', so a late
arrival is refused.

KEYS[1]  permits: <prefix>:{<name>} (string)
KEYS[2]  marker: marker of the acquire to undo, <prefix>:{<name>}:op:<clientId>:<op>
KEYS[3]  kind: kind marker <prefix>:{<name>}:kind (string 'semaphore'), set when the
         permits key is created, so inspect names the kind
ARGV[1]  count: how many that acquire asked for, integer from 1 to 2^31-1
ARGV[2]  replayWindowMs: how long the marker lives, integer ms
ARGV[3]  sharded: '1' announces with SPUBLISH (Cluster), '0' with PUBLISH
ARGV[4]  channel: the semaphore's channel <prefix>:{<name>}:permits (keys.ts)

Returns
  1  the acquire had run: its permits are back
  0  it had not run (or was cancelled already): the marker refuses it

Publishes '<count>:<available>' on `channel` when permits came back and some
are available.
]]
--- @include "announce"

local done = redis.call('GET', KEYS[2])
redis.call('SET', KEYS[2], 'cancelled', 'PX', ARGV[2])
if done ~= 'acquired' then
  return 0
end
local available = redis.call('INCRBY', KEYS[1], ARGV[1])
redis.call('SET', KEYS[3], 'semaphore')
if available > 0 then
  announce(ARGV[4], ARGV[1] .. ':' .. available, ARGV[3])
end
return 1

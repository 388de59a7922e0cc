--[[
cancel: undo a lease lock acquire whose reply came too late, or never came.

The acquire may have run, may still be on its way (a NOSCRIPT answered by EVAL
runs after the commands sent behind it), or may never arrive. Either way it
must leave no hold: the tombstone refuses it if it arrives after this, and if
it ran and still holds the lock, the key is deleted.

KEYS[1]  lock: string <prefix>:{<name>}: <owner>|<op>
KEYS[2]  cancelled: tombstones <prefix>:{<name>}:cancelled (hash; field <owner>|<op>)
ARGV[1]  holder: <owner>|<op> of the acquire to undo
ARGV[2]  replayWindowMs: how long `cancelled` lives after this call, ms
ARGV[3]  channel: the lock's channel <prefix>:{<name>}:release (core's lock/keys.ts)

Returns
  1  the acquire had run and is undone ('unlock' published)
  0  it had not run, or no longer holds the lock: the tombstone refuses it

Publishes 'unlock' on `channel` when the undo frees the lock.
]]
--- @include "announce"

redis.call('HSET', KEYS[2], ARGV[1], '1')
redis.call('PEXPIRE', KEYS[2], ARGV[2])
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
redis.call('DEL', KEYS[1])
announce(ARGV[3], 'unlock', '0')
return 1

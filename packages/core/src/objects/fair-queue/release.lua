--[[
release: release one hold (or all of an owner's) of the fair lock, and hand it to the queue head.

KEYS[1]  lock: hold <prefix>:{<name>} (hash <owner> -> count, t, o; hold-record)
KEYS[2]  released: last full release <prefix>:{<name>}:released (string: <owner>:<op>)
KEYS[3]  fence: fencing counter of the lock's hash slot <prefix>:{<slot tag>}:fence
KEYS[4]  queue: waiter queue <prefix>:{<name>}:queue (list of owners)
KEYS[5]  waiters: waiter leases <prefix>:{<name>}:waiters (zset owner -> lease end, ms)
KEYS[6]  tickets: waiter tickets <prefix>:{<name>}:tickets (hash owner -> "<op> <leaseMs>")
ARGV[1]  owner: <clientId>:<taskId>
ARGV[2]  op: operation id of this call
ARGV[3]  all: '1' releases every count of the owner, '0' one count
ARGV[4]  token: release only the hold with this fencing token; '' any
ARGV[5]  replayWindowMs: how long `released` remembers the last full release, ms
ARGV[6]  sharded: '1' announces with SPUBLISH (Cluster), '0' with PUBLISH
ARGV[7]  wakePrefix: <prefix>:{<name>}:release: (plus the head's clientId: its wake channel)

Returns (as the lock's release.lua)
  {1, remaining, receivers}  released; at 0 the lock went to the live head, if any, and
                             receivers heard it (0 with nobody queued or on a replay)
  {1, 0, 0, head, token, leaseMs}
                             released, and the lock went to a head of this owner's client:
                             a hold of count 0 with that token, living the head's leaseMs
  {-1, exists}               not held by this owner (with that token): nothing changed

Publishes "<head> <token> <ticket op>" to the head's client at count 0 when someone is queued
and the head is another client's: only that waiter wakes, already holding the lock. A head of
this owner's client is told by the reply (grant-head).
]]
--- @include "mint-token"
--- @include "fair-queue"
--- @include "announce"
--- @include "grant-head"
--- @include "release-count"

local lock, released, fence, queue, waiters, tickets = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local owner, op, all, token, replayWindowMs, sharded, wakePrefix = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7]
local stays = releaseCount(lock, released, owner, op, all, token, replayWindowMs)
if stays then
  return stays
end
local receivers, handOff = grantNext(lock, fence, queue, waiters, tickets, sharded, wakePrefix, string.match(owner, '^[^:]*'))
if handOff then
  return {1, 0, 0, handOff[1], handOff[2], handOff[3]}
end
return {1, 0, receivers}

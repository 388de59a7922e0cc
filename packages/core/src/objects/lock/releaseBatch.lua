--[[
releaseBatch: release.lua for each of a batch of releases of one client, on one server and hash slot, in
one call: the transport sends the releases that queued behind its calls in flight this way.

KEYS[3i-2]  lock: hold of item i <prefix>:{<name>} (hash; hold-record)
KEYS[3i-1]  released: its last full release <prefix>:{<name>}:released (string: <owner>:<op>)
KEYS[3i]    clients: its waiting clients <prefix>:{<name>}:clients (zset; register-client, wake-client)
ARGV[7i-6]  owner: <clientId>:<taskId> of item i
ARGV[7i-5]  op: its operation id
ARGV[7i-4]  all: '1' releases every count of the owner, '0' one count
ARGV[7i-3]  token: release only the hold with this fencing token; '' any
ARGV[7i-2]  replayWindowMs: how long `released` remembers its last full release, ms
ARGV[7i-1]  sharded: '1' announces with SPUBLISH (Cluster), '0' with PUBLISH
ARGV[7i]    requeueTtlMs: '0' when no other task of the owner's client waits on its lock; else how
            long `clients` lives after the client registers, ms

Returns one reply per item, in order: release.lua's reply for it, or an error reply when that item
failed (a key holding something else): the other items' replies and writes stand.

Publishes as release.lua, per item.
]]
--- @include "batch-error"
--- @include "lock-release"

local replies = {}
for i = 1, #KEYS / 3 do
  local lock, released, clients = KEYS[3 * i - 2], KEYS[3 * i - 1], KEYS[3 * i]
  local owner, op, all, token = ARGV[7 * i - 6], ARGV[7 * i - 5], ARGV[7 * i - 4], ARGV[7 * i - 3]
  local replayWindowMs, sharded, requeueTtlMs = ARGV[7 * i - 2], ARGV[7 * i - 1], ARGV[7 * i]
  -- pcall: an error is this item's reply (Redis sends a table with `err` as an error reply), not the batch's.
  local ok, reply = pcall(releaseLock, lock, released, clients, owner, op, all, token, replayWindowMs, sharded, requeueTtlMs)
  replies[i] = ok and reply or batchError(reply)
end
return replies

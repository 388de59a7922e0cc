--[[
releaseBatch: release.lua for each of a batch of releases of one client, on one server and hash slot, in
one call: the transport sends the releases that queued behind its calls in flight this way.

KEYS[3i-2]  lock: hold of item i <prefix>:{<name>} (hash; hold-record)
KEYS[3i-1]  released: its last full release <prefix>:{<name>}:released (string: <owner>:<op>)
KEYS[3i]    clients: its waiting clients <prefix>:{<name>}:clients (zset; register-client, wake-client)
ARGV[1]     all: '1' releases every count of an owner, '0' one count (every item's: the transport
            batches calls that agree)
ARGV[2]     replayWindowMs: how long `released` remembers a last full release, ms
ARGV[3]     sharded: '1' announces with SPUBLISH (Cluster), '0' with PUBLISH
ARGV[4]     requeueTtlMs: '0' when no other task of an owner's client waits on its lock; else how
            long `clients` lives after the client registers, ms
ARGV[3i+2]  owner: <clientId>:<taskId> of item i
ARGV[3i+3]  op: its operation id
ARGV[3i+4]  token: release only the hold with this fencing token; '' any

Returns one reply per item, in order: release.lua's reply for it, or an error reply when that item
failed (a key holding something else): the other items' replies and writes stand.

Publishes as release.lua, per item.
]]
--- @include "batch-error"
--- @include "lock-release"

local all, replayWindowMs, sharded, requeueTtlMs = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local count = #KEYS / 3
-- One EXISTS over every item's waiting clients: when none is there (the common batch), no item
-- looks again. An item whose clients an earlier item of the batch registered in looks for itself.
local probe = {}
for i = 1, count do
  probe[i] = KEYS[3 * i]
end
local noneWaits = redis.call('EXISTS', unpack(probe)) == 0
local registered = {}
local replies = {}
for i = 1, count do
  local lock, released, clients = KEYS[3 * i - 2], KEYS[3 * i - 1], KEYS[3 * i]
  local owner, op, token = ARGV[3 * i + 2], ARGV[3 * i + 3], ARGV[3 * i + 4]
  local noClients = noneWaits and not registered[clients]
  -- pcall: an error is this item's reply (Redis sends a table with `err` as an error reply), not the batch's.
  local ok, reply = pcall(releaseLock, lock, released, clients, owner, op, all, token, replayWindowMs, sharded, requeueTtlMs, noClients)
  replies[i] = ok and reply or batchError(reply)
  if requeueTtlMs ~= '0' then
    registered[clients] = true
  end
end
return replies

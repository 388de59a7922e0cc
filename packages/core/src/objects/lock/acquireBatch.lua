--[[
acquireBatch: acquire.lua for each of a batch of acquisitions of one client, on one server and hash slot,
in one call: the transport sends the acquisitions that queued behind its calls in flight this way.

KEYS[4i-3]  lock: hold of item i <prefix>:{<name>} (hash; hold-record)
KEYS[4i-2]  fence: fencing counter of its hash slot <prefix>:{<slot tag>}:fence (string)
KEYS[4i-1]  cancelled: its tombstones <prefix>:{<name>}:cancelled (hash; field <owner>:<op>)
KEYS[4i]    clients: its waiting clients <prefix>:{<name>}:clients (zset; register-client)
ARGV[1]     leaseMs: TTL to set, integer ms (every item's: the transport batches calls that agree)
ARGV[2]     once: '1' refuses an owner's second acquisition, '0' counts it
ARGV[3]     waitTtlMs: '0' when the callers do not wait if refused; else how long `clients` lives, ms
ARGV[2i+2]  owner: <clientId>:<taskId> of item i
ARGV[2i+3]  op: its operation id, unique per owner

Returns one reply per item, in order: acquire.lua's reply for it, or an error reply when that item
failed (a key holding something else, a refused write). An item that failed wrote nothing (every check
comes before its first write); the other items' replies and writes stand.

Publishes nothing.
]]
--- @include "batch-error"
--- @include "lock-acquire"

local leaseMs, once, waitTtlMs = ARGV[1], ARGV[2], ARGV[3]
local count = #KEYS / 4
-- One EXISTS over every item's hold and tombstones: when none is there (the common batch), no item
-- looks again. An item whose lock an earlier item of the batch wrote looks for itself.
local probe = {}
for i = 1, count do
  probe[2 * i - 1], probe[2 * i] = KEYS[4 * i - 3], KEYS[4 * i - 1]
end
local noneThere = redis.call('EXISTS', unpack(probe)) == 0
local written = {}
local replies = {}
for i = 1, count do
  local lock, fence, cancelled, clients = KEYS[4 * i - 3], KEYS[4 * i - 2], KEYS[4 * i - 1], KEYS[4 * i]
  local owner, op = ARGV[2 * i + 2], ARGV[2 * i + 3]
  local absent = noneThere and not written[lock]
  -- pcall: an error is this item's reply (Redis sends a table with `err` as an error reply), not the batch's.
  local ok, reply = pcall(acquireLock, lock, fence, cancelled, clients, owner, leaseMs, op, once, waitTtlMs, absent)
  replies[i] = ok and reply or batchError(reply)
  written[lock] = true
end
return replies

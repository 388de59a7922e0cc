--[[
acquireBatch: acquire.lua for each of a batch of acquisitions of one client, on one server and hash slot,
in one call: the transport sends the acquisitions that queued behind its calls in flight this way.

KEYS[4i-3]  lock: hold of item i <prefix>:{<name>} (hash; hold-record)
KEYS[4i-2]  fence: fencing counter of its hash slot <prefix>:{<slot tag>}:fence (string)
KEYS[4i-1]  cancelled: its tombstones <prefix>:{<name>}:cancelled (hash; field <owner>:<op>)
KEYS[4i]    clients: its waiting clients <prefix>:{<name>}:clients (zset; register-client)
ARGV[5i-4]  owner: <clientId>:<taskId> of item i
ARGV[5i-3]  leaseMs: its TTL to set, integer ms
ARGV[5i-2]  op: its operation id, unique per owner
ARGV[5i-1]  once: '1' refuses the owner's second acquisition, '0' counts it
ARGV[5i]    waitTtlMs: '0' when its caller does not wait if refused; else how long `clients` lives, ms

Returns one reply per item, in order: acquire.lua's reply for it, or an error reply when that item
failed (a key holding something else, a refused write). An item that failed wrote nothing (every check
comes before its first write); the other items' replies and writes stand.

Publishes nothing.
]]
--- @include "batch-error"
--- @include "lock-acquire"

local replies = {}
for i = 1, #KEYS / 4 do
  local lock, fence, cancelled, clients = KEYS[4 * i - 3], KEYS[4 * i - 2], KEYS[4 * i - 1], KEYS[4 * i]
  local owner, leaseMs, op, once, waitTtlMs = ARGV[5 * i - 4], ARGV[5 * i - 3], ARGV[5 * i - 2], ARGV[5 * i - 1], ARGV[5 * i]
  -- pcall: an error is this item's reply (Redis sends a table with `err` as an error reply), not the batch's.
  local ok, reply = pcall(acquireLock, lock, fence, cancelled, clients, owner, leaseMs, op, once, waitTtlMs)
  replies[i] = ok and reply or batchError(reply)
end
return replies

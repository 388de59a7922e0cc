-- grant-head (include, after "announce", "mint-token" and "fair-queue"): hands a free fair lock to
-- the live queue head in the script that freed it, so the head's next command is its critical section.
-- The hold: owner = head, count 0 (not yet counted by the head's script), a fresh token, op '', and the
-- head's requested lease cut to where its waiter lease ends, so a dead head holds the queue up no
-- longer than it would have waiting. Both ends lie at least min(lease, waiter lease) after the ticket
-- try was sent, where the head's client counts its lease from. Acquire counts the hold (0 -> 1, the
-- claim) before a reentry; release and cancel read count 0 as one.
-- The message, on wakePrefix .. <head's clientId>, is "<head> <token> <ticket op>": the ticket tells
-- the waiter the grant is its own, not a late one for an earlier call. Returns how many heard it.
--- @include "hold-record"

local function grantHead(lock, fenceKey, queueKey, leasesKey, ticketsKey, head, leaseEnd, now, sharded, wakePrefix)
  -- head and leaseEnd come from liveHead.
  local ticket = redis.call('HGET', ticketsKey, head) or ''
  local op, leaseMs = string.match(ticket, '^(%S+) (%d+)$')
  dequeue(queueKey, leasesKey, ticketsKey, head)
  local token = mintToken(fenceKey)
  writeHold(lock, head, 0, token36(token), '', false, math.max(1, math.min(leaseEnd - now, tonumber(leaseMs) or (leaseEnd - now))))
  return announce(wakePrefix .. string.match(head, '^[^:]*'), head .. ' ' .. token .. ' ' .. (op or ''), sharded)
end

-- Returns how many heard it (0: nobody queued).
local function grantNext(lock, fenceKey, queueKey, leasesKey, ticketsKey, sharded, wakePrefix)
  local now = nowMs()
  local head, leaseEnd = liveHead(queueKey, leasesKey, ticketsKey, now)
  if not head then
    return 0
  end
  return grantHead(lock, fenceKey, queueKey, leasesKey, ticketsKey, head, leaseEnd, now, sharded, wakePrefix)
end

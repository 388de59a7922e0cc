-- grant-head (include, after "announce", "mint-token" and "fair-queue"): hands
-- a free fair lock to the live queue head in the script that freed it, so the
-- head's next command is not a try but its critical section.
--
-- The hold it makes: owner = head, count 0 (handed over: one hold, not yet
-- counted by the head's own script), a fresh fencing token, op '', and a TTL of
-- the head's requested lease, cut to where its waiter lease ends (server
-- clock): a head whose process died holds the ones behind it up no longer than
-- its waiter lease, as it would have in the queue. Both ends lie at least
-- min(lease, waiter lease) after the head's ticket try was sent, which is when
-- the head's client counts its lease from. Its client goes straight to the
-- critical section; acquire counts the hold (count 0 -> 1, "the claim") before
-- a reentry, and release and cancel read count 0 as one.
--
-- The message, on wakePrefix .. <clientId of the head> (that client alone
-- listens there), is "<head> <token> <ticket op>": the ticket is the head's
-- try that set its waiter lease, which tells the waiter the grant is its own
-- and not a late message for an earlier call of the same owner.
-- Returns how many subscriber connections received it.
--- @include "hold-record"

local function grantHead(lock, fenceKey, queueKey, leasesKey, ticketsKey, head, leaseEnd, now, sharded, wakePrefix)
  -- head and leaseEnd come from liveHead: a live waiter and its waiter lease.
  local ticket = redis.call('HGET', ticketsKey, head) or ''
  local op, leaseMs = string.match(ticket, '^(%S+) (%d+)$')
  dequeue(queueKey, leasesKey, ticketsKey, head)
  local token = mintToken(fenceKey)
  writeHold(lock, head, 0, token36(token), '', false, math.max(1, math.min(leaseEnd - now, tonumber(leaseMs) or (leaseEnd - now))))
  return announce(wakePrefix .. string.match(head, '^[^:]*'), head .. ' ' .. token .. ' ' .. (op or ''), sharded)
end

-- Hands a free fair lock to the live head of its queue, if any (grantHead);
-- returns how many subscriber connections heard it (0: nobody queued).
local function grantNext(lock, fenceKey, queueKey, leasesKey, ticketsKey, sharded, wakePrefix)
  local now = nowMs()
  local head, leaseEnd = liveHead(queueKey, leasesKey, ticketsKey, now)
  if not head then
    return 0
  end
  return grantHead(lock, fenceKey, queueKey, leasesKey, ticketsKey, head, leaseEnd, now, sharded, wakePrefix)
end

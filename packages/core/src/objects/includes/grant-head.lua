-- grant-head (include, after "announce", "mint-token", "fair-queue"): the script that frees a fair lock hands
-- it to the live queue head as a hold of count 0 (acquire's claim counts it; release and cancel read 0 as one).
-- Its TTL is the head's lease cut to its waiter lease, so a dead head holds the queue up no longer than waiting
-- would; both ends lie after the head's ticket try, where its client counts from. The message to the head's
-- client, "<head> <token> <ticket op>", names the try, so a late grant is not taken for a later call.
-- A head of `localClient` (the client whose script this is: it is alive and reads the reply) is told by
-- the reply instead, with no message: its TTL is then the head's own lease, which the reply names, so
-- its client can count the grant as held from the script's send.
--- @include "hold-record"

local function grantHead(lock, fenceKey, queueKey, leasesKey, ticketsKey, head, leaseEnd, now, sharded, wakePrefix, localClient)
  -- head and leaseEnd come from liveHead.
  local ticket = redis.call('HGET', ticketsKey, head) or ''
  local op, leaseMs = string.match(ticket, '^(%S+) (%d+)$')
  dequeue(queueKey, leasesKey, ticketsKey, head)
  local token = mintToken(fenceKey)
  local client = string.match(head, '^[^:]*')
  if leaseMs and client == localClient then
    grantHold(lock, head, 0, token, nil, false, leaseMs)
    return 0, {head, token, tonumber(leaseMs)}
  end
  grantHold(lock, head, 0, token, nil, false, math.max(1, math.min(leaseEnd - now, tonumber(leaseMs) or (leaseEnd - now))))
  return announce(wakePrefix .. client, head .. ' ' .. token .. ' ' .. (op or ''), sharded)
end

-- Returns how many heard it (0: nobody queued, or the head is localClient's), and for a head of
-- localClient (nil: every head hears a message) {head, token, leaseMs} of its grant.
local function grantNext(lock, fenceKey, queueKey, leasesKey, ticketsKey, sharded, wakePrefix, localClient)
  local now = nowMs()
  local head, leaseEnd = liveHead(queueKey, leasesKey, ticketsKey, now)
  if not head then
    return 0
  end
  return grantHead(lock, fenceKey, queueKey, leasesKey, ticketsKey, head, leaseEnd, now, sharded, wakePrefix, localClient)
end

-- grant-head (include, after "announce", "mint-token" and "fair-queue"): hands
-- a free fair lock to the live queue head in the script that freed it, so the
-- head's next command is not a try but its critical section.
--
-- The grant is provisional: owner = head, count 0 (not yet claimed), a fresh
-- fencing token, op '', and a TTL that ends where the head's waiter lease ends
-- (server clock). A head whose process died therefore holds the ones behind it
-- up no longer than its waiter lease, as it would have in the queue. The head's
-- client claims it with its next acquire (count 0 -> 1, its own lease), in the
-- background, and counts its lease from the send of the try that set this
-- waiter lease: that try ran before the lease began, so the client's deadline
-- falls before the server's.
--
-- The message, on <lock>:release:<clientId of the head> (that client alone
-- listens there), is "<head> <token> <op>": op is the head's try that set the
-- waiter lease (its ticket), which tells the waiter the grant is its own and
-- not a late message for an earlier call of the same owner.
-- Returns how many subscriber connections received it.
local function grantHead(lock, fenceKey, queueKey, leasesKey, ticketsKey, head, sharded)
  local leaseEnd = redis.call('ZSCORE', leasesKey, head)
  local ticket = redis.call('HGET', ticketsKey, head) or ''
  dequeue(queueKey, leasesKey, ticketsKey, head)
  local token = mintToken(fenceKey)
  redis.call('HSET', lock, 'owner', head, 'count', 0, 'token', token, 'op', '')
  redis.call('PEXPIREAT', lock, leaseEnd)
  return announce(lock .. ':release:' .. string.match(head, '^[^:]*'), head .. ' ' .. token .. ' ' .. ticket, sharded)
end

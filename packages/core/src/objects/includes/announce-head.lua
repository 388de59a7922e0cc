-- announce-head (include, after "announce"): tells the queue head of a free
-- fair lock, and no other client, that its turn has come: its owner id on
-- <lock>:release:<clientId>, the channel of the head's client only (the
-- owner's part before the first ':'). Each waiting client listens on its own
-- channel, so one hand-off wakes one process, not every process with waiters.
-- Returns how many subscriber connections received it.
local function announceHead(lock, head, sharded)
  return announce(lock .. ':release:' .. string.match(head, '^[^:]*'), head, sharded)
end

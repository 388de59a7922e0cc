-- announce (include): publish `message` on `channel`, with SPUBLISH when
-- `sharded` is '1' (a Cluster: the subscriber listens on the slot's node) and
-- PUBLISH otherwise. A fixed choice of two commands, never one named by the
-- caller. Returns how many subscriber connections received it.
local function announce(channel, message, sharded)
  if sharded == '1' then
    return redis.call('SPUBLISH', channel, message)
  end
  return redis.call('PUBLISH', channel, message)
end

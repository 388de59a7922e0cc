-- announce (include): publish `message` on `channel`, with SPUBLISH when `sharded` is '1' (Cluster:
-- the subscriber listens on the slot's node), else PUBLISH. Returns how many subscribers received it.
local function announce(channel, message, sharded)
  if sharded == '1' then
    return redis.call('SPUBLISH', channel, message)
  end
  return redis.call('PUBLISH', channel, message)
end

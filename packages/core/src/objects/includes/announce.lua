-- announce (include): publish `message` on `channel`, with SPUBLISH when `sharded` is '1' (Cluster:
-- the subscriber listens on the slot's node), else PUBLISH. Returns how many subscribers received it.
-- Through redis.pcall: an ACL may refuse the channel (Redis 7 gives a new user none) and Redis never
-- rolls back the writes made before, so a refusal counts 0 receivers and is kept in `publishRefused`,
-- which the embed step (scripts/embed-lua.mjs) declares in every script with this include and, in one
-- that announces, puts in the reply as {'rlock:publish-refused', <error>, <reply>}.
local function announce(channel, message, sharded)
  local heard = redis.pcall(sharded == '1' and 'SPUBLISH' or 'PUBLISH', channel, message)
  if type(heard) == 'table' then
    publishRefused = publishRefused or tostring(heard.err)
    return 0
  end
  return heard
end

-- register-client (include): a plain lock's waiting client enters `clients`, the zset of client ids ->
-- registration time (server us) that wake-client pops, one client per release. The zset lives `ttlMs`
-- from the latest registration (a waiting client registers again every third of it).

-- Registers the client of `owner` (<clientId>:<taskId>). `update` '1' moves it behind the others (it was
-- just served), '0' keeps its place.
local function registerClient(clients, owner, ttlMs, update)
  local clientId = string.match(owner, '^[^:]+') or owner
  local t = redis.call('TIME')
  local at = t[1] .. string.format('%06d', t[2])
  if update == '1' then
    redis.call('ZADD', clients, at, clientId)
  else
    redis.call('ZADD', clients, 'NX', at, clientId)
  end
  redis.call('PEXPIRE', clients, ttlMs)
end

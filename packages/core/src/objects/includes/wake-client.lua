-- wake-client (include, after "announce"): a plain lock wakes one waiting
-- client per release, not every client's waiters. `clients`: zset client id ->
-- registration time (server clock, us), living `ttlMs` from the latest one (a
-- waiting client retries, so registers again, every third of its lease).

-- Registers `clientId`; `update` '1' moves it behind the others (it was just
-- served), '0' keeps the place it has.
local function registerClient(clients, clientId, ttlMs, update)
  local t = redis.call('TIME')
  local at = t[1] .. string.format('%06d', t[2])
  if update == '1' then
    redis.call('ZADD', clients, at, clientId)
  else
    redis.call('ZADD', clients, 'NX', at, clientId)
  end
  redis.call('PEXPIRE', clients, ttlMs)
end

-- Takes registered clients out, longest registered first, and publishes
-- 'unlock' on `wakePrefix` .. <client id> until one listens there (a client
-- listens while it has tasks waiting on this lock; a dead or idle one is
-- dropped). Returns how many connections heard it (0: nobody is waiting).
local function wakeClient(clients, wakePrefix, sharded)
  while true do
    local first = redis.call('ZPOPMIN', clients)
    if not first[1] then
      return 0
    end
    local heard = announce(wakePrefix .. first[1], 'unlock', sharded)
    if heard > 0 then
      return heard
    end
  end
end

-- The client id of `owner` (<clientId>:<taskId>).
local function clientOf(owner)
  return string.match(owner, '^[^:]+') or owner
end

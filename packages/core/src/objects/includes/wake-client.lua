-- wake-client (include, after "announce"): how a plain lock wakes one waiting
-- client per release instead of every client's waiters.
-- `clients` is a zset of client id -> when it registered (server clock, us); a
-- client registers when a try of one of its tasks is refused, or when it
-- releases while other tasks of its own still wait; the key lives `ttlMs`
-- from the latest registration (a waiting client tries again, and so
-- registers again, at least every third of its watchdog lease).

-- Registers `clientId`; `update` '1' moves it behind the others (it was just
-- served), '0' keeps the place it has.
local function registerClient(clients, clientId, ttlMs, update)
  local t = redis.call('TIME')
  local at = string.format('%.0f', tonumber(t[1]) * 1000000 + tonumber(t[2]))
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

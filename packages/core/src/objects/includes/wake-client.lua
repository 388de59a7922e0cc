-- wake-client (include, after "announce"): a plain lock wakes one waiting client per release, not
-- every client's waiters. `clients`: zset client id -> registration time (server us), living `ttlMs`
-- from the latest (a waiting client registers again every third of it).

-- `update` '1' moves it behind the others (it was just served), '0' keeps its place.
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

-- Pops clients, longest registered first, publishing 'unlock' on `wakePrefix` .. <client id> until
-- one listens (a dead or idle one is dropped). Returns how many heard it (0: nobody is waiting).
-- A refused publish stops it: every channel would be refused, and the rest keep their places.
local function wakeClient(clients, wakePrefix, sharded)
  while true do
    local first = redis.call('ZPOPMIN', clients)
    if not first[1] then
      return 0
    end
    local heard = announce(wakePrefix .. first[1], 'unlock', sharded)
    if heard > 0 or publishRefused then
      return heard
    end
  end
end

local function clientOf(owner)
  return string.match(owner, '^[^:]+') or owner
end

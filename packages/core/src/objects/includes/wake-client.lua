-- wake-client (include, after "announce"): a plain lock wakes one waiting client per release, not
-- every client's waiters. `clients`: the zset register-client fills (client id -> registration time).

-- Pops clients, longest registered first, publishing 'unlock' on the lock's wake prefix
-- <lock>:release: .. <client id> until one listens (a dead or idle one is dropped). Returns how many
-- heard it (0: nobody is waiting). A refused publish stops it: every channel would be refused, and
-- the rest keep their places.
local function wakeClient(clients, lock, sharded)
  -- Most releases find nobody waiting: EXISTS answers that for half of what an empty ZPOPMIN costs.
  if redis.call('EXISTS', clients) == 0 then
    return 0
  end
  -- Derived from the key (lock/keys.ts) where it is needed, so no call carries it.
  local wakePrefix = lock .. ':release:'
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

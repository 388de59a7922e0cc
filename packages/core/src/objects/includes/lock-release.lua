-- lock-release (include): one release of the reentrant lock (lock/release.lua's, one per item of
-- lock/releaseBatch.lua's); the parameters and the reply are release.lua's header's.
--- @include "announce"
--- @include "register-client"
--- @include "wake-client"
--- @include "release-count"

-- `noClients`: true when the caller knows `clients` does not exist (a batch's one EXISTS said so).
local function releaseLock(lock, released, clients, owner, op, all, token, replayWindowMs, sharded, requeueTtlMs, noClients)
  local stays = releaseCount(lock, released, owner, op, all, token, replayWindowMs)
  if stays then
    return stays
  end
  if requeueTtlMs ~= '0' then
    registerClient(clients, owner, requeueTtlMs, '1')
  elseif noClients then
    -- Nobody to wake: what wakeClient answers when the key is missing.
    return 0
  end
  return wakeClient(clients, lock, sharded)
end

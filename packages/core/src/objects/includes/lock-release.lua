-- lock-release (include): one release of the reentrant lock (lock/release.lua's, one per item of
-- lock/releaseBatch.lua's); the parameters and the reply are release.lua's header's.
--- @include "announce"
--- @include "register-client"
--- @include "wake-client"
--- @include "release-count"

local function releaseLock(lock, released, clients, owner, op, all, token, replayWindowMs, sharded, requeueTtlMs)
  local stays = releaseCount(lock, released, owner, op, all, token, replayWindowMs)
  if stays then
    return stays
  end
  if requeueTtlMs ~= '0' then
    registerClient(clients, owner, requeueTtlMs, '1')
  end
  return wakeClient(clients, lock, sharded)
end

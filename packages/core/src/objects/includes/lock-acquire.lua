-- lock-acquire (include): one acquisition of the reentrant lock (lock/acquire.lua's, one per item of
-- lock/acquireBatch.lua's); the parameters and the reply are acquire.lua's header's.
--- @include "register-client"
--- @include "mint-token"
--- @include "hold-record"
--- @include "reenter-count"

-- `absent`: true when the caller knows neither `lock` nor `cancelled` exists (a batch's one EXISTS said so).
local function acquireLock(lock, fence, cancelled, clients, owner, leaseMs, op, once, waitTtlMs, absent)
  -- One EXISTS for the hold and the tombstones: the common acquire finds neither, and a free key needs no
  -- hash read or parse (readHold's HGETALL and field checks cost several times as much).
  local present = absent and 0 or redis.call('EXISTS', lock, cancelled)
  local held = present > 0 and readHold(lock)
  once = once == '1'

  if not held or held.owner == owner then
    if held and held.op == op then
      if held.count == 1 then
        return held.token
      end
      return {1, held.token, held.count}
    end
    -- An acquire can arrive after its cancel: sent on a connection that broke (its bytes may still reach
    -- Redis after the cancel on a new one) or redirected in a Cluster. The tombstone refuses it. The
    -- tombstones' hash exists only within a replay window after a cancel (the EXISTS above counted it).
    if present > (held and 1 or 0) and redis.call('HEXISTS', cancelled, owner .. ':' .. op) == 1 then
      return {-1}
    end
    if not held then
      local token = mintToken(fence)
      grantHold(lock, owner, 1, token, op, once, leaseMs)
      return token
    end
    -- Decided here: only Redis sees two branches of one task one after the other.
    if not once then
      return reenterCount(lock, held, leaseMs, op)
    end
  end

  -- Refused (held by another, or a second acquisition of a `once` hold): the caller's client waits, and
  -- hears of the release in its turn.
  if waitTtlMs ~= '0' then
    registerClient(clients, owner, waitTtlMs, '0')
  end
  return {0, redis.call('PTTL', lock), held.owner}
end

-- force-notice (include): publishes "forced <owner> <token> <key>" on `notices` .. <owner's clientId>,
-- so the holder hears of a force-unlock at once; the token keeps it from ending a newer hold. Plain
-- PUBLISH: a Cluster script may SPUBLISH only in its own slot. Nothing when `notices` is ''.
--- @include "announce"
local function noticeForced(notices, key, owner, token)
  if notices == '' or not owner or not token then
    return 0
  end
  local clientId = string.match(owner, '^[^:]+')
  if not clientId then
    return 0
  end
  return announce(notices .. clientId, 'forced ' .. owner .. ' ' .. token .. ' ' .. key, '0')
end

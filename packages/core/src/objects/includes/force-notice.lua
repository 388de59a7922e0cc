-- force-notice (include): tells the client of `owner` that a force-unlock
-- released its hold of `key` with fencing token `token`, at once rather than
-- at its next renewal. The channel is `notices` (<prefix>:client:, from the
-- caller) followed by the client id, the part of the owner
-- (<clientId>:<taskId>) before its first ':'. The message
-- "forced <owner> <token> <key>" ends only the hold with that owner and
-- token, never a newer one. Plain PUBLISH: the channel has no hash tag, and a
-- Cluster lets a script SPUBLISH only in its own slot (PUBLISH reaches the
-- subscribers on every node). Nothing is published when `notices` is '' or
-- the holder is unknown. Returns how many subscriber connections heard it.
local function noticeForced(notices, key, owner, token)
  if notices == '' or not owner or not token then
    return 0
  end
  local clientId = string.match(owner, '^[^:]+')
  if not clientId then
    return 0
  end
  return redis.call('PUBLISH', notices .. clientId, 'forced ' .. owner .. ' ' .. token .. ' ' .. key)
end

-- mint-token (include): a hash slot's next fencing token, max(counter + 1, server TIME in us), stored
-- back (SET ... GET), so tokens grow even when a restart or failover lost the counter. Digits without
-- leading zeros compare by length, then as strings (strcoll orders digits numerically in every glibc
-- locale); a counter found ahead is compared again as a number. Returns the token's decimal digits.

-- TIME once per script run: a batch's tokens on one counter share it, and counter + 1 keeps them apart.
local mintTime
local function mintToken(fenceKey)
  mintTime = mintTime or redis.call('TIME')
  local us = mintTime[2]
  if #us < 6 then
    us = string.rep('0', 6 - #us) .. us
  end
  local token = mintTime[1] .. us
  local last = redis.call('SET', fenceKey, token, 'GET')
  if last and (#last > #token or (#last == #token and last >= token)) then
    -- The counter looks ahead of the clock; as numbers it decides (a value that is no number: the clock wins).
    local counter = tonumber(last)
    if counter and counter >= tonumber(token) then
      token = string.format('%.0f', counter + 1)
      redis.call('SET', fenceKey, token)
    end
  end
  return token
end

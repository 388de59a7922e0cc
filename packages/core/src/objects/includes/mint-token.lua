-- mint-token (include): the next fencing token of a hash slot's counter: max(counter + 1, server
-- TIME in us), stored back, so tokens grow even when a restart or failover lost the counter (while
-- clocks do not run backwards). TIME is allowed in a writing script: scripts replicate their effects.
-- SET ... GET writes the clock and reads the old counter in one command. The token's digits are
-- seconds .. microseconds padded to 6, the digits of '%.0f' of nowUs; tokens are digits without
-- leading zeros, so the longer is the larger and equal lengths compare as strings: no number
-- conversion, no format on the common path. (Lua compares strings with strcoll, and Redis takes
-- LC_COLLATE from its environment; digits collate in their numeric order in the C locale and in
-- glibc's others alike, and a counter found ahead is compared again as a number before it is
-- used.) Returns the token's decimal digits.
local function mintToken(fenceKey)
  local now = redis.call('TIME')
  local us = now[2]
  if #us < 6 then
    us = string.rep('0', 6 - #us) .. us
  end
  local token = now[1] .. us
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

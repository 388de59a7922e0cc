-- mint-token (include): the next fencing token of a hash slot's counter: max(counter + 1, server
-- TIME in us), stored back, so tokens grow even when a restart or failover lost the counter (while
-- clocks do not run backwards). TIME is allowed in a writing script: scripts replicate their effects.
-- SET ... GET writes the clock and reads the old counter in one command. Seconds .. padded
-- microseconds are the digits of '%.0f' of nowUs, at a fraction of the cost. Returns the token's
-- decimal digits.
local function mintToken(fenceKey)
  local now = redis.call('TIME')
  local value = tonumber(now[1]) * 1000000 + tonumber(now[2])
  local token = now[1] .. string.format('%06d', now[2])
  local last = tonumber(redis.call('SET', fenceKey, token, 'GET') or '0') or 0
  if last >= value then
    token = string.format('%.0f', last + 1)
    redis.call('SET', fenceKey, token)
  end
  return token
end

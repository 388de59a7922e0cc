-- mint-token (include): the next fencing token of a hash slot's counter.
-- token = max(counter + 1, server TIME in microseconds), stored back in the
-- counter, so tokens grow per slot even when a restart or failover lost the
-- counter (while server clocks do not run backwards). TIME is allowed in a
-- script that writes because scripts replicate their effects (Redis >= 5).
-- One SET ... GET writes the clock and reads the old counter in one command;
-- only when the counter is ahead of the clock is it written a second time.
-- The clock's token is TIME's seconds followed by its microseconds padded to
-- 6 digits: the digits string.format('%.0f', nowUs) gives, at a quarter of the
-- cost ('%.0f' of a 16-digit number is the dearest step of an acquire).
local function mintToken(fenceKey)
  local now = redis.call('TIME')
  local nowUs = tonumber(now[1]) * 1000000 + tonumber(now[2])
  local token = now[1] .. string.format('%06d', now[2])
  local last = tonumber(redis.call('SET', fenceKey, token, 'GET') or '0') or 0
  if last >= nowUs then
    token = string.format('%.0f', last + 1)
    redis.call('SET', fenceKey, token)
  end
  return token
end

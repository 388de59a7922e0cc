-- now-ms (include): the server's clock in Unix ms, the one clock every lease in a script is measured on.
local function nowMs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

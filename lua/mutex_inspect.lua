-- mutex_inspect: the mutex's state, never its token.
--
-- KEYS[1]  lock hash  hf:{mx:<ns>:<name>}
-- KEYS[2]  last fence hf:{mx:<ns>:<name>}:fence
--
-- Returns {held "1"|"0", fence or "", count, remaining ttlMs, expiresAt or ""}.
-- Read-only.

local t = redis.call('TIME')
local now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local lock = redis.call('HMGET', KEYS[1], 'owner', 'count', 'fence', 'exp')
if not lock[1] then
  return {'0', redis.call('GET', KEYS[2]) or '', '0', '0', ''}
end
local exp = tonumber(lock[4])
return {'1', lock[3], lock[2], string.format('%.0f', math.max(exp - now_ms, 0)), lock[4]}

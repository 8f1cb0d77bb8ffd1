-- idempotency_inspect: the key's state, never its token.
--
-- KEYS[1]  record hf:{id:<ns>:<key>}
--
-- Returns one of
--   {"absent"}
--   {"started", fence, expiresAt}
--   {"completed", fence, completedAt, "json:" .. response}   (prefix: see idempotency_begin.lua)
-- A start whose deadline passed is "absent": the next begin starts anew (the
-- record is only kept for its fingerprint). Read-only.

local t = redis.call('TIME')
local now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local rec = redis.call('HMGET', KEYS[1], 'state', 'fence', 'deadline', 'completedAt', 'response')
if rec[1] == 'completed' then
  return {'completed', rec[2] or '0', rec[4] or '0', 'json:' .. (rec[5] or 'null')}
end
if rec[1] == 'started' and (tonumber(rec[3]) or 0) > now_ms then
  return {'started', rec[2], rec[3]}
end
return {'absent'}

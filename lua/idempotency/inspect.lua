-- idempotency_inspect: the key's state, never its token.
--
-- flags: no-writes (Redis refuses any write; Upstash takes shared read locks)
--
-- KEYS[1]  record hf:{id:<ns>:<key>}
--
-- Returns name/value pairs, one of
--   state absent
--   state started, fence, expiresAt
--   state completed, fence, completedAt, response ("json:" .. text; prefix: see begin.lua)
-- A start whose deadline passed is "absent": the next begin starts anew (the
-- record is only kept for its fingerprint). Read-only.

local now_ms = redis_now()

local rec = redis.call('HMGET', KEYS[1], 'state', 'fence', 'deadline', 'completedAt', 'response', 'ttl', 'lt', 'holder')
if rec[1] == 'completed' then
  return {'state', 'completed', 'fence', rec[2] or '0', 'completedAt', rec[4] or '0', 'response', 'json:' .. (rec[5] or 'null')}
end
if rec[1] == 'started' then
  local deadline = lease_end(tonumber(rec[3]) or 0, tonumber(rec[7] or rec[6]) or 0, now_ms)
  if deadline > now_ms then return {'state', 'started', 'fence', rec[2], 'expiresAt', fmt(deadline), 'holder', rec[8] or ''} end
end
return {'state', 'absent'}

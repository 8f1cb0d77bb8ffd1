-- idempotency watch: how a watched start (onExpire) stands. Read-only.
--
-- flags: no-writes (Redis refuses any write; Upstash takes shared read locks)
--
-- KEYS[1]  record  hf:{id:<ns>:<key>}
-- KEYS[2]  ended   hf:{id:<ns>:<key>}:ended   fences given up on purpose (fail)
-- ARGV[1]  the start's fence
--
-- Returns name/value pairs: state held, remainingMs, expiresAt (started under
-- this fence, within its deadline); state ended (completed under this fence,
-- or failed on purpose: no notification); or state lapsed.

local fence = arg_str(1, 'fence', 32)
local now_ms = redis_now()
local rec = redis.call('HMGET', KEYS[1], 'state', 'fence', 'deadline', 'ttl', 'lt')
if rec[2] == fence then
  if rec[1] == 'completed' then return {'state', 'ended'} end
  local deadline = lease_end(tonumber(rec[3]) or 0, tonumber(rec[5] or rec[4]) or 0, now_ms)
  if rec[1] == 'started' and deadline > now_ms then
    return {'state', 'held', 'remainingMs', fmt(deadline - now_ms), 'expiresAt', fmt(deadline)}
  end
end
if redis.call('SISMEMBER', KEYS[2], fence) == 1 then return {'state', 'ended'} end
return {'state', 'lapsed'}

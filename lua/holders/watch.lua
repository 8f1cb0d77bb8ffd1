-- holders watch: how a holder's lease watched for onExpire stands. Read-only.
--
-- flags: no-writes (Redis refuses any write; Upstash takes shared read locks)
--
-- KEYS[1]  lock   hf:{<rw|sem>:<ns>:<name>}
-- KEYS[2]  ended  hf:{<rw|sem>:<ns>:<name>}:ended   tokens of watched holders that released on purpose
-- ARGV[1]  the holder's token
--
-- Returns name/value pairs: state held, remainingMs, expiresAt; or state
-- ended (released: no notification); or state lapsed.

local token = arg_str(1, 'token', 256)
local now_ms = redis_now()
local raw = redis.call('HGET', KEYS[1], 'h:' .. token)
if raw then
  local rec = cjson.decode(raw)
  local exp = lease_end(tonumber(rec.exp), tonumber(rec.lt or rec.ttl), now_ms)
  if exp > now_ms then return {'state', 'held', 'remainingMs', fmt(exp - now_ms), 'expiresAt', fmt(exp)} end
end
if redis.call('SISMEMBER', KEYS[2], token) == 1 then return {'state', 'ended'} end
return {'state', 'lapsed'}

-- mutex_heartbeat: extend the lease of the token that holds the mutex.
--
-- KEYS[1]  lock hash hf:{mx:<ns>:<name>}
-- ARGV[1]  token
-- ARGV[2]  ttlMs, or "" for the ttl of the acquire
--
-- Returns {"ok", expiresAt, ttlMs, fence, watched "1"|"0"} or {"lost"}.
--
-- Safe to run twice without a request id: a repeat only sets the same
-- expiry again from Redis's now.

local t = redis.call('TIME')
local now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local lock = redis.call('HMGET', KEYS[1], 'owner', 'ttl', 'fence', 'watch')
if lock[1] ~= ARGV[1] then return {'lost'} end

local ttl = tonumber(ARGV[2]) or tonumber(lock[2])
redis.call('HSET', KEYS[1], 'exp', string.format('%.0f', now_ms + ttl))
redis.call('PEXPIREAT', KEYS[1], now_ms + ttl)
return {'ok', string.format('%.0f', now_ms + ttl), string.format('%.0f', ttl), lock[3], lock[4] or '0'}

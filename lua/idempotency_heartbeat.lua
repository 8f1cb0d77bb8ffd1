-- idempotency_heartbeat: move the in-progress deadline of the current owner.
--
-- KEYS[1]  record hf:{id:<ns>:<key>}
-- ARGV[1]  token
-- ARGV[2]  ttlMs, or "" for the ttl of the begin
--
-- Returns {"ok", expiresAt, ttlMs, fence} or {"lost"} when the token is not
-- the started owner or its deadline already passed (someone may have taken
-- over, or may at any moment).
--
-- Safe to run twice without a request id: a repeat only sets the same
-- deadline again from Redis's now.

local function fmt(n) return string.format('%.0f', n) end

local t = redis.call('TIME')
local now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local rec = redis.call('HMGET', KEYS[1], 'state', 'token', 'deadline', 'ttl', 'fence')
if rec[1] ~= 'started' or rec[2] ~= ARGV[1] or (tonumber(rec[3]) or 0) <= now_ms then return {'lost'} end

local ttl = tonumber(ARGV[2]) or tonumber(rec[4])
redis.call('HSET', KEYS[1], 'deadline', fmt(now_ms + ttl))
-- The record must outlive the deadline; it usually already does (retainMs).
if redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIREAT', KEYS[1], fmt(now_ms + ttl)) end
return {'ok', fmt(now_ms + ttl), fmt(ttl), rec[5]}

-- mutex heartbeat: extend the lease of the token that holds the mutex.
--
-- KEYS[1]  lock  hf:{mx:<ns>:<name>}
-- KEYS[2]  next  hf:{mx:<ns>:<name>}:next   the lock object's registered head waiter, if any
-- ARGV[1]  token
-- ARGV[2]  ttlMs (1 .. 86400000), or "" for the ttl of the last acquire
-- ARGV[3]  registration grace ms (see acquire.lua)
--
-- Returns name/value pairs: status ok, expiresAt, ttlMs, fence; or status lost.
--
-- A heartbeat is the holder's sign of life: it also marks a handed-over grant
-- as picked up (pk), so the lock object will not take it back. A registered
-- waiter's registration is kept alive with the lease it waits behind (never
-- shortened; a placeholder, token "", is not kept alive).
-- Safe to run twice: a repeat only sets the same expiry again from Redis's now.

local token = arg_str(1, 'token', 256)
local ttl_arg = nil
if ARGV[2] ~= '' then ttl_arg = arg_int(2, 'ttlMs', 1, 86400000) end
local grace = arg_int(3, 'registration grace ms', 1, 86400000)

local now_ms = redis_now()

local lock = redis.call('HMGET', KEYS[1], 'owner', 'ttl', 'fence')
if lock[1] ~= token then return {'status', 'lost'} end

local ttl = ttl_arg or tonumber(lock[2])
local exp = now_ms + ttl
redis.call('HSET', KEYS[1], 'exp', fmt(exp))
redis.call('HDEL', KEYS[1], 'pk')
redis.call('PEXPIREAT', KEYS[1], fmt(exp))
local registered_for = redis.call('PTTL', KEYS[2])
if registered_for > 0 and registered_for < exp + grace - now_ms and redis.call('HGET', KEYS[2], 'token') ~= '' then
  redis.call('PEXPIREAT', KEYS[2], fmt(exp + grace))
end
return {'status', 'ok', 'expiresAt', fmt(exp), 'ttlMs', fmt(ttl), 'fence', lock[3]}

-- mutex heartbeat: extend the lease of the token that holds the mutex.
--
-- KEYS[1]  lock  hf:{mx:<ns>:<name>}
-- KEYS[2]  delay hf:{mx:<ns>:<name>}:delay   the lease's lock-delay, moved to the new end plus the delay
-- ARGV[1]  token
-- ARGV[2]  ttlMs (1 .. 86400000), or "" for the ttl of the last acquire
--
-- Returns name/value pairs: status ok, expiresAt, ttlMs, fence (and quorumFence
-- on a quorum's database, see raise_fence.lua); or status lost.
--
-- A heartbeat is the holder's sign of life: it also marks a handed-over grant
-- as picked up (pk), so the lock object will not take it back. It does not
-- touch the lock object's registered waiter: the object renews that when it
-- wakes at the old end of the lease, and a registration whose object lost its
-- line (a restart) must lapse, or the release would hand the lock to a waiter
-- that is gone, for that waiter's whole ttl.
-- Safe to run twice: a repeat only sets the same expiry again from Redis's now.

local token = arg_str(1, 'token', 256)
local ttl_arg = nil
if ARGV[2] ~= '' then ttl_arg = arg_int(2, 'ttlMs', 1, 86400000) end

local now_ms = redis_now()

local lock = redis.call('HMGET', KEYS[1], 'owner', 'ttl', 'fence', 'qf', 'ld')
if lock[1] ~= token then return {'status', 'lost'} end

local ttl = ttl_arg or tonumber(lock[2])
local exp = now_ms + ttl
-- lt: the lease's length as of this write (lease_end in lua/prelude.lua).
redis.call('HSET', KEYS[1], 'exp', fmt(exp), 'lt', fmt(ttl))
redis.call('HDEL', KEYS[1], 'pk')
redis.call('PEXPIREAT', KEYS[1], fmt(exp))
if lock[5] then
  local delayed_until = fmt(exp + tonumber(lock[5]))
  redis.call('SET', KEYS[2], delayed_until, 'XX', 'PXAT', delayed_until)
end
local r = {'status', 'ok', 'expiresAt', fmt(exp), 'ttlMs', fmt(ttl), 'fence', lock[3]}
if lock[4] then
  r[#r + 1] = 'quorumFence'
  r[#r + 1] = lock[4]
end
return r

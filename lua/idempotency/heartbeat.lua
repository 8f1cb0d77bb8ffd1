-- idempotency_heartbeat: move the in-progress deadline of the current owner.
--
-- KEYS[1]  record hf:{id:<ns>:<key>}
-- KEYS[2]  watchers hf:{id:<ns>:<key>}:watchers  passed only by the Worker: exists while the lock
--                                                 object has watch sockets (lua/FIELDS.md)
-- ARGV[1]  token
-- ARGV[2]  ttlMs, or "" for the ttl of the begin
--
-- Returns name/value pairs: status ok, expiresAt, ttlMs, fence (and watchers "1" when KEYS[2]
-- was passed and exists); or status lost when the token is not
-- the started owner or its deadline already passed (someone may have taken
-- over, or may at any moment).
--
-- Safe to run twice without a request id: a repeat only sets the same
-- deadline again from Redis's now.

local token = arg_str(1, 'token', 256)
local ttl_arg = nil
if ARGV[2] ~= '' then ttl_arg = arg_int(2, 'ttlMs', 1, 86400000) end

local now_ms = redis_now()

local rec = redis.call('HMGET', KEYS[1], 'state', 'token', 'deadline', 'ttl', 'fence')
if rec[1] ~= 'started' or rec[2] ~= token or (tonumber(rec[3]) or 0) <= now_ms then return {'status', 'lost'} end

local ttl = ttl_arg or tonumber(rec[4])
-- lt: the deadline's length as of this write (lease_end in lua/prelude.lua).
redis.call('HSET', KEYS[1], 'deadline', fmt(now_ms + ttl), 'lt', fmt(ttl))
-- The record must outlive the deadline; it usually already does (retainMs).
if redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIREAT', KEYS[1], fmt(now_ms + ttl)) end
local r = {'status', 'ok', 'expiresAt', fmt(now_ms + ttl), 'ttlMs', fmt(ttl), 'fence', rec[5]}
if KEYS[2] and redis.call('EXISTS', KEYS[2]) == 1 then
  r[#r + 1] = 'watchers'
  r[#r + 1] = '1'
end
return r

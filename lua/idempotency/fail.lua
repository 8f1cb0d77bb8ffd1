-- idempotency_fail: the current owner gives up; the key is free to begin again.
--
-- KEYS[1]  record  hf:{id:<ns>:<key>}
-- KEYS[2]  request hf:{id:<ns>:<key>}:rq:<id>
-- KEYS[3]  ended   hf:{id:<ns>:<key>}:ended   fences given up on purpose, kept ENDED_KEEP_MS
-- ARGV[1]  token
--
-- Returns name/value pairs: status ok, fence; or status lost.
--
-- Deletes the whole record, fingerprint included: the work was not done, so
-- a retry, with whatever payload, may run it. The fence key stays, so the
-- next start still gets a larger fence. Same owner rule as complete.
--
-- Safe to run twice: a retry with the same request id returns the first
-- answer; lost is not remembered.

local token = arg_str(1, 'token', 256)

local seen = redis.call('GET', KEYS[2])
if seen then return seen end

local now_ms = redis_now()

local rec = redis.call('HMGET', KEYS[1], 'state', 'token', 'deadline', 'fence')
if rec[1] ~= 'started' or rec[2] ~= token or (tonumber(rec[3]) or 0) <= now_ms then return {'status', 'lost'} end

redis.call('DEL', KEYS[1])
redis.call('SADD', KEYS[3], rec[4])
redis.call('PEXPIRE', KEYS[3], ENDED_KEEP_MS_ARG)
local r = {'status', 'ok', 'fence', rec[4]}
return remember(KEYS[2], r)

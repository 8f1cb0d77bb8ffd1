-- idempotency_fail: the current owner gives up; the key is free to begin again.
--
-- KEYS[1]  record  hf:{id:<ns>:<key>}
-- KEYS[2]  request hf:{id:<ns>:<key>}:rq:<id>
-- ARGV[1]  token
-- ARGV[2]  request memory ms
--
-- Returns {"ok", fence} or {"lost"}.
--
-- Deletes the whole record, fingerprint included: the work was not done, so
-- a retry, with whatever payload, may run it. The fence key stays, so the
-- next start still gets a larger fence. Same owner rule as complete.
--
-- Safe to run twice: a retry with the same request id returns the first answer.

local seen = redis.call('GET', KEYS[2])
if seen then return cjson.decode(seen) end

local function answer(r)
  redis.call('SET', KEYS[2], cjson.encode(r), 'PX', ARGV[2])
  return r
end

local t = redis.call('TIME')
local now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local rec = redis.call('HMGET', KEYS[1], 'state', 'token', 'deadline', 'fence')
if rec[1] ~= 'started' or rec[2] ~= ARGV[1] or (tonumber(rec[3]) or 0) <= now_ms then return answer({'lost'}) end

redis.call('DEL', KEYS[1])
return answer({'ok', rec[4]})

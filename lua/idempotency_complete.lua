-- idempotency_complete: the current owner stores its result.
--
-- KEYS[1]  record  hf:{id:<ns>:<key>}
-- KEYS[2]  request hf:{id:<ns>:<key>}:rq:<id>
-- ARGV[1]  token
-- ARGV[2]  response as JSON text (size checked by the caller)
-- ARGV[3]  request memory ms
--
-- Returns {"ok", completedAt, fence} or {"lost"}.
--
-- Only the started owner within its deadline may complete; anyone else gets
-- "lost" and nothing changes, so a slow owner whose deadline lapsed can never
-- overwrite the result of the owner that took over. The record is then kept
-- retainMs (from its begin) counted from now; fingerprint and fence stay.
--
-- Safe to run twice: a retry with the same request id returns the first
-- answer (without it, a retried complete would answer "lost").

local seen = redis.call('GET', KEYS[2])
if seen then return cjson.decode(seen) end

local function answer(r)
  redis.call('SET', KEYS[2], cjson.encode(r), 'PX', ARGV[3])
  return r
end

local t = redis.call('TIME')
local now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local rec = redis.call('HMGET', KEYS[1], 'state', 'token', 'deadline', 'fence', 'retain')
if rec[1] ~= 'started' or rec[2] ~= ARGV[1] or (tonumber(rec[3]) or 0) <= now_ms then return answer({'lost'}) end

local completed_at = string.format('%.0f', now_ms)
redis.call('HDEL', KEYS[1], 'token', 'deadline', 'ttl')
redis.call('HSET', KEYS[1], 'state', 'completed', 'response', ARGV[2], 'completedAt', completed_at)
redis.call('PEXPIREAT', KEYS[1], string.format('%.0f', now_ms + tonumber(rec[5])))
return answer({'ok', completed_at, rec[4]})

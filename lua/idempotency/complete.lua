-- idempotency_complete: the current owner stores its result.
--
-- KEYS[1]  record  hf:{id:<ns>:<key>}
-- KEYS[2]  request hf:{id:<ns>:<key>}:rq:<id>
-- KEYS[3]  watchers hf:{id:<ns>:<key>}:watchers  passed only by the Worker: exists while the lock
--                                                 object has watch sockets (lua/FIELDS.md)
-- ARGV[1]  token
-- ARGV[2]  response as JSON text (size checked by the caller)
--
-- Returns name/value pairs: status ok, completedAt, fence, waited (1 when a begin
-- was answered in_progress or a waiter looked (inspect_waiting) meanwhile: the
-- Worker tells the key's lock object, for its waiters), and watchers "1" when KEYS[3] was
-- passed and exists; or status lost.
--
-- Only the started owner within its deadline may complete; anyone else gets
-- "lost" and nothing changes, so a slow owner whose deadline lapsed can never
-- overwrite the result of the owner that took over. The record is then kept
-- retainMs (from its begin) counted from now; fingerprint and fence stay.
--
-- Safe to run twice: a retry with the same request id returns the first
-- answer (without it, a retried complete would answer lost). Lost is not
-- remembered: it changes nothing.

local token = arg_str(1, 'token', 256)
if type(ARGV[2]) ~= 'string' or #ARGV[2] < 1 or #ARGV[2] > 65536 then bad_arg('response', 'must be 1 to 65536 bytes of JSON') end

local seen = redis.call('GET', KEYS[2])
if seen then return seen end

local now_ms = redis_now()

local rec = redis.call('HMGET', KEYS[1], 'state', 'token', 'deadline', 'fence', 'retain', 'w')
if rec[1] ~= 'started' or rec[2] ~= token or (tonumber(rec[3]) or 0) <= now_ms then return {'status', 'lost'} end

local completed_at = fmt(now_ms)
redis.call('HDEL', KEYS[1], 'token', 'deadline', 'ttl', 'lt', 'w', 'holder')
redis.call('HSET', KEYS[1], 'state', 'completed', 'response', ARGV[2], 'completedAt', completed_at)
redis.call('PEXPIREAT', KEYS[1], fmt(now_ms + tonumber(rec[5])))
local r = {'status', 'ok', 'completedAt', completed_at, 'fence', rec[4], 'waited', rec[6] and '1' or '0'}
if KEYS[3] and redis.call('EXISTS', KEYS[3]) == 1 then
  r[#r + 1] = 'watchers'
  r[#r + 1] = '1'
end
return remember(KEYS[2], r)

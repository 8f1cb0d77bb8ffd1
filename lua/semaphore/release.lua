-- semaphore release: give back a holder's permits, by token.
-- Compare-and-delete: never touches another holder's permits.
--
-- KEYS[1]  lock     hf:{sem:<ns>:<name>}
-- KEYS[2]  request  hf:{sem:<ns>:<name>}:rq:<id>
-- KEYS[3]  ended    hf:{sem:<ns>:<name>}:ended   tokens of watched holders that released, kept ENDED_KEEP_MS
-- KEYS[4]  gate     hf:{sem:<ns>:<name>}:gate
-- KEYS[5]  watchers hf:{sem:<ns>:<name>}:watchers  passed only by the Worker: exists while the lock
--                                                 object has watch sockets (lua/FIELDS.md)
-- ARGV[1]  token
--
-- Returns name/value pairs: status ok, permits (given back), available,
-- watched, waiters ("1": the lock object has a line and must hear of this),
-- and watchers "1" when KEYS[5] was passed and exists; or status lost.
--
-- Safe to run twice: the answer is remembered under the request id, so a
-- retry answers ok rather than lost.
-- uses: holders

local token = arg_str(1, 'token', 256)

local seen = redis.call('GET', KEYS[2])
if seen then return seen end

local live, _, dead, other = holders_load(KEYS[1], redis_now(), true)
local mine = live[token]
if not mine then return {'status', 'lost'} end

redis.call('HDEL', KEYS[1], 'h:' .. token)
live[token] = nil
if mine.wt == '1' then
  redis.call('SADD', KEYS[3], token)
  redis.call('PEXPIRE', KEYS[3], ENDED_KEEP_MS_ARG)
end
holders_settle(KEYS[1], live, dead)
local used = 0
for _, rec in pairs(live) do used = used + rec.p end

local r = {'status', 'ok', 'permits', fmt(mine.p), 'available', fmt(tonumber(other.limit or '0') - used),
  'watched', mine.wt or '0', 'waiters', fmt(redis.call('EXISTS', KEYS[4]))}
if KEYS[5] and redis.call('EXISTS', KEYS[5]) == 1 then
  r[#r + 1] = 'watchers'
  r[#r + 1] = '1'
end
return remember(KEYS[2], r)

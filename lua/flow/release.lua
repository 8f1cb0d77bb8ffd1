-- flow release: give back a holder's slot, by token. Its start stays
-- counted in the window (it happened). Compare-and-delete: never touches
-- another holder.
--
-- KEYS[1]  lock     hf:{flow:<ns>:<name>}
-- KEYS[2]  request  hf:{flow:<ns>:<name>}:rq:<id>
-- KEYS[3]  ended    hf:{flow:<ns>:<name>}:ended   tokens of watched holders that released, kept ENDED_KEEP_MS
-- KEYS[4]  gate     hf:{flow:<ns>:<name>}:gate
-- KEYS[5]  watchers hf:{flow:<ns>:<name>}:watchers  passed only by the Worker (lua/FIELDS.md)
-- ARGV[1]  token
--
-- Returns name/value pairs: status ok, held (slots still held), watched,
-- waiters ("1": the lock object has a line and must hear of this), and
-- watchers "1" when KEYS[5] was passed and exists; or status lost.
--
-- Safe to run twice: the answer is remembered under the request id, so a
-- retry answers ok rather than lost.
-- uses: holders

local token = arg_str(1, 'token', 256)

local seen = redis.call('GET', KEYS[2])
if seen then return seen end

local live, n, dead = holders_load(KEYS[1], redis_now(), true)
local mine = live[token]
if not mine then return {'status', 'lost'} end

redis.call('HDEL', KEYS[1], 'h:' .. token)
live[token] = nil
if mine.wt == '1' then
  redis.call('SADD', KEYS[3], token)
  redis.call('PEXPIRE', KEYS[3], ENDED_KEEP_MS_ARG)
end
holders_settle(KEYS[1], live, dead)

local r = {'status', 'ok', 'held', fmt(n - 1), 'watched', mine.wt or '0', 'waiters', fmt(redis.call('EXISTS', KEYS[4]))}
if KEYS[5] and redis.call('EXISTS', KEYS[5]) == 1 then
  r[#r + 1] = 'watchers'
  r[#r + 1] = '1'
end
return remember(KEYS[2], r)

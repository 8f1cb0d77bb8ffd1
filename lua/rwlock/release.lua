-- rwlock release: drop one hold of a holder, by token. Compare-and-delete:
-- never touches another holder's lease.
--
-- KEYS[1]  lock     hf:{rw:<ns>:<name>}
-- KEYS[2]  request  hf:{rw:<ns>:<name>}:rq:<id>
-- KEYS[3]  ended    hf:{rw:<ns>:<name>}:ended   tokens of watched holders that released, kept ENDED_KEEP_MS
-- KEYS[4]  gate     hf:{rw:<ns>:<name>}:gate
-- KEYS[5]  watchers hf:{rw:<ns>:<name>}:watchers  passed only by the Worker: exists while the lock
--                                                 object has watch sockets (lua/FIELDS.md)
-- ARGV[1]  token
-- ARGV[2]  mode: read | write | any (the write hold if the token has one, else a read hold)
--
-- Returns name/value pairs: status ok, released ("1": the token holds
-- nothing any more), mode, count (holds left in that mode), watched,
-- waiters ("1": the lock object has a line and must hear of this); or
-- status lost (the token holds nothing in that mode). An ok answer also has watchers "1"
-- when KEYS[5] was passed and exists (the Worker then tells the lock object).
--
-- A writer that also reads keeps its read when it releases the write (a
-- downgrade): readers may join it, writers still wait. Safe to run twice:
-- the answer is remembered under the request id; lost is not.
-- uses: holders

local token = arg_str(1, 'token', 256)
local mode = arg_one_of(2, 'mode', {'read', 'write', 'any'})

local seen = redis.call('GET', KEYS[2])
if seen then return seen end

local live, _, dead = holders_load(KEYS[1], redis_now(), true)
local mine = live[token]
if not mine then return {'status', 'lost'} end
if mode == 'any' then mode = mine.w > 0 and 'write' or 'read' end
if (mode == 'write' and mine.w == 0) or (mode == 'read' and mine.r == 0) then return {'status', 'lost'} end

if mode == 'write' then mine.w = mine.w - 1 else mine.r = mine.r - 1 end
local released = mine.w == 0 and mine.r == 0
if released then
  redis.call('HDEL', KEYS[1], 'h:' .. token)
  live[token] = nil
  if mine.wt == '1' then
    redis.call('SADD', KEYS[3], token)
    redis.call('PEXPIRE', KEYS[3], ENDED_KEEP_MS_ARG)
  end
else
  holders_put(KEYS[1], token, mine)
end
holders_settle(KEYS[1], live, dead)

local r = {'status', 'ok', 'released', released and '1' or '0', 'mode', mode,
  'count', fmt(mode == 'write' and mine.w or mine.r), 'watched', mine.wt or '0',
  'waiters', fmt(redis.call('EXISTS', KEYS[4]))}
if KEYS[5] and redis.call('EXISTS', KEYS[5]) == 1 then
  r[#r + 1] = 'watchers'
  r[#r + 1] = '1'
end
return remember(KEYS[2], r)

-- holders force release: an operator frees the holders of a read-write lock
-- or semaphore, whatever their tokens: all of them, or those with one label.
--
-- KEYS[1]  lock     hf:{<rw|sem>:<ns>:<name>}
-- KEYS[2]  request  hf:{<rw|sem>:<ns>:<name>}:rq:<id>
-- KEYS[3]  ended    hf:{<rw|sem>:<ns>:<name>}:ended   tokens of watched holders that ended on purpose, kept ENDED_KEEP_MS
-- KEYS[4]  gate     hf:{<rw|sem>:<ns>:<name>}:gate
-- KEYS[5]  watchers hf:{<rw|sem>:<ns>:<name>}:watchers  passed only by the Worker: exists while the lock
--                                                 object has watch sockets (lua/FIELDS.md)
-- ARGV[1]  which    'all' or 'label'
-- ARGV[2]  label    the holder label to free ('' with all)
--
-- Returns name/value pairs: status ok, released (how many holders), fence
-- (the highest freed), ended (JSON list of the freed watched holders'
-- tokens), waiters ("1": the lock object has a line), and holder (the label
-- of the first freed holder to end) when one had a label; or status lost when
-- no holder matched.
-- An ok answer also has watchers "1" when KEYS[5] was passed and exists.
--
-- Safe to run twice: the answer is remembered under the request id, so a
-- retry answers the same and frees nobody who came since.
-- uses: holders

local which = ARGV[1]
if which ~= 'all' and which ~= 'label' then bad_arg('which', "must be 'all' or 'label'") end
local label = which == 'label' and arg_str(2, 'holder', 1024) or ''

local seen = redis.call('GET', KEYS[2])
if seen then return seen end

local live, _, dead = holders_load(KEYS[1], redis_now(), true)
local freed, fence, first, first_exp, ended = 0, nil, false, nil, {}
for token, rec in pairs(live) do
  if which == 'all' or rec.hl == label then
    redis.call('HDEL', KEYS[1], 'h:' .. token)
    live[token] = nil
    freed = freed + 1
    if not fence or tonumber(rec.f) > tonumber(fence) then fence = rec.f end
    if rec.hl and (not first_exp or tonumber(rec.exp) < first_exp) then first, first_exp = rec.hl, tonumber(rec.exp) end
    if rec.wt == '1' then
      redis.call('SADD', KEYS[3], token)
      ended[#ended + 1] = token
    end
  end
end
if freed == 0 then return {'status', 'lost'} end
if #ended > 0 then redis.call('PEXPIRE', KEYS[3], ENDED_KEEP_MS_ARG) end
holders_settle(KEYS[1], live, dead)

local r = {'status', 'ok', 'released', fmt(freed), 'fence', tostring(fence), 'ended', cjson.encode(ended),
  'waiters', fmt(redis.call('EXISTS', KEYS[4]))}
if first then
  r[#r + 1] = 'holder'
  r[#r + 1] = first
end
if KEYS[5] and redis.call('EXISTS', KEYS[5]) == 1 then
  r[#r + 1] = 'watchers'
  r[#r + 1] = '1'
end
return remember(KEYS[2], r)

-- rwlock acquire: a try-lock for read or write, or a re-entry by a holder
-- (a writer may re-enter the write lock, and may take a read lock too: a
-- downgrade once it releases the write).
--
-- KEYS[1]  lock     hf:{rw:<ns>:<name>}          hash of holders (see holders.lua): w, r counts
-- KEYS[2]  fence    hf:{rw:<ns>:<name>}:fence     the last fence, kept FENCE_KEEP_MS after a grant
-- KEYS[3]  gate     hf:{rw:<ns>:<name>}:gate      the lock object's first waiter (no barging)
-- KEYS[4]  request  hf:{rw:<ns>:<name>}:rq:<id>   a re-entry's answer, for retries
-- KEYS[5]  watchers hf:{rw:<ns>:<name>}:watchers  passed only by the Worker: exists while the lock
--                                                 object has watch sockets (lua/FIELDS.md)
-- ARGV[1]  token: a new holder's token, or the held token when re-entering
-- ARGV[2]  mode: read | write
-- ARGV[3]  how: new (a try-lock) | reenter
-- ARGV[4]  ttlMs (1 .. 86400000)
-- ARGV[5]  watch: "1" when the lease is watched for onExpire
-- ARGV[6]  holder: its label ("" for none; a re-entry's replaces the label)
--
-- Returns name/value pairs:
--   status granted, token, mode, fence, ttlMs, expiresAt, count, and watchers "1" when KEYS[5]
--     was passed and exists (the Worker then tells the lock object)
--   status busy, retryAfterMs, queued ("1": it could be granted, but waiters are first), and
--     when a holder is in the way: holder (the first to end's label) and expiresAt
--   status lost      re-entry with a token that holds nothing
--   status upgrade   a reader asked for the write lock with its read token
--
-- The fence grows on every new write grant and on a read grant to a free
-- lock; readers that join share the fence of the readers they join. Safe to
-- run twice: a new acquire whose token already holds is its own earlier
-- grant, answered again; a re-entry (which counts) is remembered under its
-- request id, and answered again only while its lease stands (a retry after
-- it lapsed is lost). Busy, lost and upgrade change nothing.
-- uses: holders

local token = arg_str(1, 'token', 256)
local mode = arg_one_of(2, 'mode', {'read', 'write'})
local how = arg_one_of(3, 'how', {'new', 'reenter'})
local ttl = arg_int(4, 'ttlMs', 1, 86400000)
local watch = arg_flag(5, 'watch')
local holder = ARGV[6] or ''
if #holder > 1024 then bad_arg('holder', 'must be at most 1024 bytes') end

local now_ms, now_us = redis_now()
local floor = fence_floor(now_us) -- before the first write: it checks the caller's clock
local live, n, dead = holders_load(KEYS[1], now_ms, true)
local mine = live[token]

local function granted(rec)
  local count = mode == 'write' and rec.w or rec.r
  local r = {'status', 'granted', 'token', token, 'mode', mode, 'fence', rec.f, 'ttlMs', rec.ttl, 'expiresAt', rec.exp, 'count', fmt(count)}
  if KEYS[5] and redis.call('EXISTS', KEYS[5]) == 1 then
    r[#r + 1] = 'watchers'
    r[#r + 1] = '1'
  end
  return r
end

if how == 'reenter' then
  if not mine then return {'status', 'lost'} end
  -- Replayed only while the lease it names stands: a retry that comes after it lapsed (and another took
  -- the lock) is lost, never told it holds.
  local seen = redis.call('GET', KEYS[4])
  if seen then return seen end
  if mode == 'write' and mine.w == 0 then return {'status', 'upgrade'} end
  if mode == 'write' then mine.w = mine.w + 1 else mine.r = mine.r + 1 end
  mine.ttl = fmt(ttl)
  mine.exp = fmt(now_ms + ttl)
  mine.lt = nil
  mine.pk = nil -- the holder is alive: its grant is picked up
  if watch == '1' then mine.wt = '1' end
  if holder ~= '' then mine.hl = holder end
  holders_put(KEYS[1], token, mine)
  holders_settle(KEYS[1], live, dead)
  local r = granted(mine)
  return remember(KEYS[4], r)
end

if mine then
  -- This acquire's own earlier grant (a retry): its client is alive.
  holders_picked_up(KEYS[1], token, mine)
  return granted(mine)
end

local writer_end, writer = holders_first_end(live, function(rec) return rec.w > 0 end)
local blocked_until, blocker = nil, nil
if mode == 'read' then blocked_until, blocker = writer_end, writer
elseif n > 0 then blocked_until, blocker = holders_first_end(live, function() return true end) end
if blocked_until then return holders_busy(blocked_until, blocker, now_ms) end
if redis.call('EXISTS', KEYS[3]) == 1 then
  return {'status', 'busy', 'retryAfterMs', '100', 'queued', '1'}
end

local fence
if n > 0 then
  for _, rec in pairs(live) do fence = rec.f end -- readers share one fence
else
  fence = issue_fence(KEYS[2], floor)
end
local rec = {w = 0, r = 0, ttl = fmt(ttl), exp = fmt(now_ms + ttl), f = fence, wt = watch}
if mode == 'write' then rec.w = 1 else rec.r = 1 end
if holder ~= '' then rec.hl = holder end
live[token] = rec
holders_put(KEYS[1], token, rec)
holders_settle(KEYS[1], live, dead)
return granted(rec)

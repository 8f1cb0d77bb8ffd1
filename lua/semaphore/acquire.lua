-- semaphore acquire: take `permits` of `limit`, as one holder with its own
-- token and lease, if they are free and nobody waits.
--
-- KEYS[1]  lock   hf:{sem:<ns>:<name>}         hash of holders (see holders.lua): p; and limit
-- KEYS[2]  fence  hf:{sem:<ns>:<name>}:fence    the last fence, kept FENCE_KEEP_MS after a grant
-- KEYS[3]  gate   hf:{sem:<ns>:<name>}:gate     the lock object's first waiter (no barging)
-- KEYS[4]  watchers hf:{sem:<ns>:<name>}:watchers  passed only by the Worker: exists while the lock
--                                                 object has watch sockets (lua/FIELDS.md)
-- ARGV[1]  token (new, one per acquire)
-- ARGV[2]  limit (1 .. 10000)
-- ARGV[3]  permits (1 .. limit)
-- ARGV[4]  ttlMs (1 .. 86400000)
-- ARGV[5]  watch: "1" when the lease is watched for onExpire
-- ARGV[6]  holder: its label ("" for none)
--
-- Returns name/value pairs:
--   status granted, token, permits, limit, fence, ttlMs, expiresAt, available, and watchers "1"
--     when KEYS[4] was passed and exists (the Worker then tells the lock object)
--   status busy, retryAfterMs, queued ("1": the permits are free, but waiters are first), and
--     when holders are in the way: holder (the first to end's label) and expiresAt
--   status limit_mismatch, limit (holders exist with this other limit)
--
-- Every grant gets a new fence. Safe to run twice: a token that already
-- holds is this acquire's own earlier grant, answered again. Busy and
-- mismatch answers change nothing.
-- uses: holders

local token = arg_str(1, 'token', 256)
local limit = arg_int(2, 'limit', 1, 10000)
local permits = arg_int(3, 'permits', 1, limit)
local ttl = arg_int(4, 'ttlMs', 1, 86400000)
local watch = arg_flag(5, 'watch')
local holder = ARGV[6] or ''
if #holder > 1024 then bad_arg('holder', 'must be at most 1024 bytes') end

local now_ms, now_us = redis_now()
local floor = fence_floor(now_us) -- before the first write: it checks the caller's clock
local live, n, dead, other = holders_load(KEYS[1], now_ms, true)
local held_limit = tonumber(other.limit) or limit
local used = 0
for _, rec in pairs(live) do used = used + rec.p end

local function granted(rec)
  local r = {'status', 'granted', 'token', token, 'permits', fmt(rec.p), 'limit', fmt(held_limit), 'fence', rec.f,
    'ttlMs', rec.ttl, 'expiresAt', rec.exp, 'available', fmt(held_limit - used)}
  if KEYS[4] and redis.call('EXISTS', KEYS[4]) == 1 then
    r[#r + 1] = 'watchers'
    r[#r + 1] = '1'
  end
  return r
end

if live[token] then
  -- This acquire's own earlier grant (a retry): its client is alive.
  holders_picked_up(KEYS[1], token, live[token])
  return granted(live[token])
end
if n > 0 and held_limit ~= limit then return {'status', 'limit_mismatch', 'limit', fmt(held_limit)} end
if used + permits > limit then
  local first, blocker = holders_first_end(live, function() return true end)
  return holders_busy(first, blocker, now_ms)
end
if redis.call('EXISTS', KEYS[3]) == 1 then
  return {'status', 'busy', 'retryAfterMs', '100', 'queued', '1'}
end

held_limit = limit
local rec = {p = permits, ttl = fmt(ttl), exp = fmt(now_ms + ttl), f = issue_fence(KEYS[2], floor), wt = watch}
if holder ~= '' then rec.hl = holder end
live[token] = rec
used = used + permits
-- The record and the limit in one write (holders_put's field, and the limit its holders agree on).
redis.call('HSET', KEYS[1], 'h:' .. token, cjson.encode(rec), 'limit', fmt(limit))
holders_settle(KEYS[1], live, dead)
return granted(rec)

-- flow acquire: take one slot of a flow limit (at most `concurrency` held,
-- at most `count` starts in any `perMs` window), as one holder with its own
-- token and lease, if the limit admits it now and nobody waits.
--
-- KEYS[1]  lock    hf:{flow:<ns>:<name>}           hash of holders (see holders.lua); each record's lim
-- KEYS[2]  fence   hf:{flow:<ns>:<name>}:fence     the last fence, kept FENCE_KEEP_MS after a grant
-- KEYS[3]  gate    hf:{flow:<ns>:<name>}:gate      the lock object's first waiter (no barging)
-- KEYS[4]  starts  hf:{flow:<ns>:<name>}:starts    sorted set: one member per grant (its fence), scored by
--                                                  its grant time (Redis ms); kept the window's length
-- KEYS[5]  limit   hf:{flow:<ns>:<name>}:limit     the limit its starts were counted under, kept as long
-- KEYS[6]  watchers hf:{flow:<ns>:<name>}:watchers passed only by the Worker (lua/FIELDS.md)
-- ARGV[1]  token (new, one per acquire)
-- ARGV[2]  concurrency (1 .. 10000, "" for none)
-- ARGV[3]  rate count (1 .. 10000, "" for none)
-- ARGV[4]  rate perMs (1000 .. 86400000, "" for none; given with the count)
-- ARGV[5]  ttlMs (1 .. 86400000)
-- ARGV[6]  watch: "1" when the lease is watched for onExpire
-- ARGV[7]  holder: its label ("" for none)
--
-- Returns name/value pairs:
--   status granted, token, fence, ttlMs, expiresAt, startedAt (its grant time), held (slots held,
--     its own counted), starts (grants in the window ending now, its own counted; "" without a rate),
--     and watchers "1" when KEYS[6] was passed and exists
--   status busy, retryAfterMs (when a slot frees and the window admits a start, or 100 while others
--     wait), queued ("1": others wait first), reason (concurrency | rate | line), and when holders
--     are in the way: holder (the first to end's label) and expiresAt
--   status limit_mismatch, limit (the limit in force, as "concurrency/count/perMs", "" for a part
--     absent) while anyone holds or a start is in its window
--
-- The limit in force is its holders' (each record keeps it as lim) or, with
-- none, the one the window's starts were counted under. Every grant gets a
-- new fence and is one start. Safe to run twice: a token that already holds
-- is this acquire's own earlier grant, answered again, and counts no second
-- start. Busy and mismatch answers change nothing but drop starts that left
-- the window.
-- uses: holders

local token = arg_str(1, 'token', 256)
local conc = ARGV[2] ~= '' and arg_int(2, 'concurrency', 1, 10000) or nil
local count = ARGV[3] ~= '' and arg_int(3, 'rate.count', 1, 10000) or nil
local per = ARGV[4] ~= '' and arg_int(4, 'rate.perMs', 1000, 86400000) or nil
if (count == nil) ~= (per == nil) then bad_arg('rate', 'needs both count and perMs') end
if not conc and not count then bad_arg('limit', 'needs concurrency or rate') end
local ttl = arg_int(5, 'ttlMs', 1, 86400000)
local watch = arg_flag(6, 'watch')
local holder = ARGV[7] or ''
if #holder > 1024 then bad_arg('holder', 'must be at most 1024 bytes') end
local want = (ARGV[2]) .. '/' .. (ARGV[3]) .. '/' .. (ARGV[4])

local now_ms, now_us = redis_now()
local floor = fence_floor(now_us) -- before the first write: it checks the caller's clock
local live, n, dead = holders_load(KEYS[1], now_ms, true)
local in_force = redis.call('GET', KEYS[5])
for _, rec in pairs(live) do in_force = rec.lim break end
if in_force and in_force ~= want then return {'status', 'limit_mismatch', 'limit', in_force} end
if not in_force then redis.call('DEL', KEYS[4]) end -- starts of a limit no longer in force

local k = 0
if per then
  redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', fmt(now_ms - per))
  k = redis.call('ZCARD', KEYS[4])
end

local function granted(rec)
  local r = {'status', 'granted', 'token', token, 'fence', rec.f, 'ttlMs', rec.ttl, 'expiresAt', rec.exp,
    'startedAt', rec.st, 'held', fmt(n), 'starts', per and fmt(k) or ''}
  if KEYS[6] and redis.call('EXISTS', KEYS[6]) == 1 then
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

-- When a slot frees (all held) and when the window admits a start (count starts in it): the later is when to retry.
local slot_at, first_rec, window_at = nil, nil, nil
if conc and n >= conc then slot_at, first_rec = holders_first_end(live, function() return true end) end
if count and k >= count then
  window_at = tonumber(redis.call('ZRANGE', KEYS[4], k - count, k - count, 'WITHSCORES')[2]) + per
end
if slot_at or window_at then
  local reason = (window_at and (not slot_at or window_at > slot_at)) and 'rate' or 'concurrency'
  local r = {'status', 'busy', 'retryAfterMs', fmt(math.max(math.max(slot_at or 0, window_at or 0) - now_ms, 1)),
    'queued', '0', 'reason', reason}
  if first_rec then
    r[#r + 1], r[#r + 2], r[#r + 3], r[#r + 4] = 'holder', first_rec.hl or '', 'expiresAt', fmt(slot_at)
  end
  return r
end
if redis.call('EXISTS', KEYS[3]) == 1 then
  return {'status', 'busy', 'retryAfterMs', '100', 'queued', '1', 'reason', 'line'}
end

local rec = {ttl = fmt(ttl), exp = fmt(now_ms + ttl), f = issue_fence(KEYS[2], floor), wt = watch, lim = want, st = fmt(now_ms)}
if holder ~= '' then rec.hl = holder end
live[token] = rec
n = n + 1
holders_put(KEYS[1], token, rec)
if per then
  redis.call('ZADD', KEYS[4], now_ms, rec.f)
  k = k + 1
  redis.call('PEXPIREAT', KEYS[4], fmt(now_ms + per))
  redis.call('SET', KEYS[5], want, 'PXAT', fmt(now_ms + per))
end
holders_settle(KEYS[1], live, dead)
return granted(rec)

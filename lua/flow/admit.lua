-- flow admit: the lock object's step for its line. Grants the waiters at the
-- front in order while the limit admits them (a slot free, a start left in
-- the window); the first it does not admit stops the line and is left in the
-- gate, so try-locks stay behind it. A waiter whose limit differs from the
-- one in force is refused and the line moves on.
--
-- KEYS[1]  lock    hf:{flow:<ns>:<name>}
-- KEYS[2]  fence   hf:{flow:<ns>:<name>}:fence
-- KEYS[3]  gate    hf:{flow:<ns>:<name>}:gate
-- KEYS[4]  starts  hf:{flow:<ns>:<name>}:starts
-- KEYS[5]  limit   hf:{flow:<ns>:<name>}:limit
-- ARGV[1]  more: "1" when further waiters stand behind the ones passed
-- ARGV[2]  k, the number of waiters passed (1 .. 256), then 8 values each:
--          token, concurrency, rate count, rate perMs (each "" for none, as flow/acquire.lua),
--          ttlMs, watch ("0"|"1"), mark_pickup ("1": the grant must be picked up), holder ("" for none)
--
-- Returns name/value pairs: status ok, granted (JSON list of {token, fence,
-- ttlMs, expiresAt, startedAt, held, starts}: the counts as of its grant), refused (JSON list of {token,
-- limit}), retryAfterMs and reason when a waiter is left (when a slot frees
-- and the window admits a start, the later; concurrency | rate), else "".
--
-- Safe to run twice: a waiter that already holds (a step whose answer was
-- lost) is answered again and counts no second start; if it must be picked up
-- (mark_pickup "1"), its lease and pickup time start again from now and it is
-- marked pk (see semaphore/admit.lua).
-- uses: holders

local more = arg_flag(1, 'more')
local n_waiters = arg_int(2, 'k', 1, 256)
local waiters = {}
for i = 1, n_waiters do
  local at = 2 + (i - 1) * 8
  local w = {
    token = arg_str(at + 1, 'token', 256),
    conc = ARGV[at + 2] ~= '' and arg_int(at + 2, 'concurrency', 1, 10000) or nil,
    count = ARGV[at + 3] ~= '' and arg_int(at + 3, 'rate.count', 1, 10000) or nil,
    per = ARGV[at + 4] ~= '' and arg_int(at + 4, 'rate.perMs', 1000, 86400000) or nil,
    ttl = arg_int(at + 5, 'ttlMs', 1, 86400000),
    watch = arg_flag(at + 6, 'watch'),
    mark_pickup = arg_flag(at + 7, 'mark_pickup'),
    holder = ARGV[at + 8] or '',
  }
  if (w.count == nil) ~= (w.per == nil) then bad_arg('rate', 'needs both count and perMs') end
  if not w.conc and not w.count then bad_arg('limit', 'needs concurrency or rate') end
  if #w.holder > 1024 then bad_arg('holder', 'must be at most 1024 bytes') end
  w.lim = ARGV[at + 2] .. '/' .. ARGV[at + 3] .. '/' .. ARGV[at + 4]
  waiters[i] = w
end

local now_ms, now_us = redis_now()
local floor = fence_floor(now_us) -- before the first write: it checks the caller's clock
local live, n, dead = holders_load(KEYS[1], now_ms, true)
local in_force = redis.call('GET', KEYS[5])
for _, rec in pairs(live) do in_force = rec.lim break end
-- The starts in the window of the limit in force (none when none is: a waiter granted here sets it).
local k, in_force_per = 0, string.match(in_force or '', '^%d*/%d*/(%d+)$')
if in_force_per then
  redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', fmt(now_ms - tonumber(in_force_per)))
  k = redis.call('ZCARD', KEYS[4])
elseif not in_force then
  redis.call('DEL', KEYS[4])
end
local granted, refused, stop_at, reason = {}, {}, nil, ''

for _, w in ipairs(waiters) do
  local mine = live[w.token]
  if mine then
    if w.mark_pickup == '1' then
      mine.exp = fmt(now_ms + tonumber(mine.ttl))
      mine.lt = nil
      mine.pk = fmt(now_ms + PICKUP_MS)
      holders_put(KEYS[1], w.token, mine)
    end
    granted[#granted + 1] = {token = w.token, fence = mine.f, ttlMs = mine.ttl, expiresAt = mine.exp, startedAt = mine.st,
      held = n, starts = w.per and k or ''}
  elseif in_force and in_force ~= w.lim then
    refused[#refused + 1] = {token = w.token, limit = in_force}
  else
    local slot_at, window_at = nil, nil
    if w.conc and n >= w.conc then slot_at = holders_first_end(live, function() return true end) end
    if w.count and k >= w.count then
      window_at = tonumber(redis.call('ZRANGE', KEYS[4], k - w.count, k - w.count, 'WITHSCORES')[2]) + w.per
    end
    if slot_at or window_at then
      stop_at = math.max(slot_at or 0, window_at or 0)
      reason = (window_at and (not slot_at or window_at > slot_at)) and 'rate' or 'concurrency'
      gate_set(KEYS[3], w.token, math.max(holders_last_end(live) or now_ms, stop_at) + REGISTRATION_GRACE_MS)
      break
    end
    in_force = w.lim
    local rec = {ttl = fmt(w.ttl), exp = fmt(now_ms + w.ttl), f = issue_fence(KEYS[2], floor), wt = w.watch, lim = w.lim,
      st = fmt(now_ms)}
    if w.mark_pickup == '1' then rec.pk = fmt(now_ms + PICKUP_MS) end
    if w.holder ~= '' then rec.hl = w.holder end
    live[w.token] = rec
    n = n + 1
    holders_put(KEYS[1], w.token, rec)
    if w.per then
      redis.call('ZADD', KEYS[4], now_ms, rec.f)
      k = k + 1
      redis.call('PEXPIREAT', KEYS[4], fmt(now_ms + w.per))
      redis.call('SET', KEYS[5], w.lim, 'PXAT', fmt(now_ms + w.per))
    end
    granted[#granted + 1] = {token = w.token, fence = rec.f, ttlMs = rec.ttl, expiresAt = rec.exp, startedAt = rec.st,
      held = n, starts = w.per and k or ''}
  end
end

local retry = ''
if stop_at then
  retry = fmt(math.max(stop_at - now_ms, 1))
elseif more == '1' then
  gate_set(KEYS[3], '', now_ms + REGISTRATION_GRACE_MS)
else
  redis.call('DEL', KEYS[3])
end
holders_settle(KEYS[1], live, dead)
return {'status', 'ok', 'granted', cjson.encode(granted), 'refused', cjson.encode(refused), 'retryAfterMs', retry,
  'reason', reason}

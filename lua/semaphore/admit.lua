-- semaphore admit: the lock object's step for its line. Grants the waiters
-- at the front in order while their permits fit; the first that does not
-- fit stops the line (a big request is not overtaken by small ones) and is
-- left in the gate so try-locks stay behind it. A waiter whose limit differs
-- from the holders' is refused and the line moves on.
--
-- KEYS[1]  lock   hf:{sem:<ns>:<name>}
-- KEYS[2]  fence  hf:{sem:<ns>:<name>}:fence
-- KEYS[3]  gate   hf:{sem:<ns>:<name>}:gate
-- ARGV[1]  more: "1" when further waiters stand behind the ones passed
-- ARGV[2]  k, the number of waiters passed (1 .. 256), then 7 values each:
--          token, limit, permits, ttlMs, watch ("0"|"1"), mark_pickup ("1": the grant must be picked up),
--          holder (its label, "" for none)
--
-- Returns name/value pairs: status ok, granted (JSON list of {token,
-- permits, limit, fence, ttlMs, expiresAt, available}), refused (JSON list
-- of {token, limit}), retryAfterMs (when a waiter is left: the earliest
-- lease end; else "").
--
-- Safe to run twice: a waiter that already holds (a step whose answer was
-- lost) is answered again; if it must be picked up (mark_pickup "1"), its lease and
-- pickup time start again from now, as its answer will say, and it is marked
-- pk even if the lost step granted it unmarked (its waiter was fresh then):
-- nobody has its token yet, and a grant that is never picked up must be
-- taken back.
-- uses: holders

local more = arg_flag(1, 'more')
local k = arg_int(2, 'k', 1, 256)
local waiters = {}
for i = 1, k do
  local at = 2 + (i - 1) * 7
  local limit = arg_int(at + 2, 'limit', 1, 10000)
  waiters[i] = {
    token = arg_str(at + 1, 'token', 256),
    limit = limit,
    permits = arg_int(at + 3, 'permits', 1, limit),
    ttl = arg_int(at + 4, 'ttlMs', 1, 86400000),
    watch = arg_flag(at + 5, 'watch'),
    mark_pickup = arg_flag(at + 6, 'mark_pickup'),
    holder = ARGV[at + 7] or '',
  }
  if #waiters[i].holder > 1024 then bad_arg('holder', 'must be at most 1024 bytes') end
end

local now_ms, now_us = redis_now()
local floor = fence_floor(now_us) -- before the first write: it checks the caller's clock
local live, n, dead, other = holders_load(KEYS[1], now_ms, true)
local held_limit = tonumber(other.limit)
local used = 0
for _, rec in pairs(live) do used = used + rec.p end
local granted, refused, stopped = {}, {}, false

for _, w in ipairs(waiters) do
  local mine = live[w.token]
  if mine then
    if w.mark_pickup == '1' then
      mine.exp = fmt(now_ms + tonumber(mine.ttl))
      mine.lt = nil
      mine.pk = fmt(now_ms + PICKUP_MS)
      holders_put(KEYS[1], w.token, mine)
    end
    granted[#granted + 1] = {token = w.token, permits = mine.p, limit = held_limit, fence = mine.f, ttlMs = mine.ttl, expiresAt = mine.exp}
  elseif n > 0 and held_limit ~= w.limit then
    refused[#refused + 1] = {token = w.token, limit = held_limit}
  elseif used + w.permits > w.limit then
    gate_set(KEYS[3], w.token, holders_last_end(live) + REGISTRATION_GRACE_MS)
    stopped = true
    break
  else
    held_limit = w.limit
    local rec = {p = w.permits, ttl = fmt(w.ttl), exp = fmt(now_ms + w.ttl), f = issue_fence(KEYS[2], floor), wt = w.watch}
    if w.mark_pickup == '1' then rec.pk = fmt(now_ms + PICKUP_MS) end
    if w.holder ~= '' then rec.hl = w.holder end
    live[w.token] = rec
    n = n + 1
    used = used + w.permits
    holders_put(KEYS[1], w.token, rec)
    granted[#granted + 1] = {token = w.token, permits = w.permits, limit = w.limit, fence = rec.f, ttlMs = rec.ttl, expiresAt = rec.exp}
  end
end
for _, g in ipairs(granted) do g.available = held_limit - used end

local retry = ''
if stopped then
  retry = fmt(math.max(holders_first_end(live, function() return true end) - now_ms, 1))
elseif more == '1' then
  gate_set(KEYS[3], '', now_ms + REGISTRATION_GRACE_MS)
else
  redis.call('DEL', KEYS[3])
end
if n > 0 then redis.call('HSET', KEYS[1], 'limit', fmt(held_limit)) end
holders_settle(KEYS[1], live, dead)
return {'status', 'ok', 'granted', cjson.encode(granted), 'refused', cjson.encode(refused), 'retryAfterMs', retry}

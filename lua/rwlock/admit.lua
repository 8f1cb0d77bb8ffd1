-- rwlock admit: the lock object's step for its line. Grants the waiters at
-- the front in order while they can be granted (after a writer, every
-- reader up to the next writer at once), stops at the first that cannot,
-- and leaves that one in the gate so try-locks stay behind it.
--
-- KEYS[1]  lock   hf:{rw:<ns>:<name>}
-- KEYS[2]  fence  hf:{rw:<ns>:<name>}:fence
-- KEYS[3]  gate   hf:{rw:<ns>:<name>}:gate
-- ARGV[1]  more: "1" when further waiters stand behind the ones passed
-- ARGV[2]  k, the number of waiters passed (1 .. 256), then 6 values each:
--          token, mode (read|write), ttlMs, watch ("0"|"1"), mark_pickup ("1": the grant must be picked up),
--          holder (its label, "" for none)
--
-- Returns name/value pairs: status ok, granted (a JSON list of {token, mode,
-- fence, ttlMs, expiresAt, count}), retryAfterMs (when a waiter is left:
-- the earliest end of a lease in its way; else "").
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
  local at = 2 + (i - 1) * 6
  waiters[i] = {
    token = arg_str(at + 1, 'token', 256),
    mode = arg_one_of(at + 2, 'mode', {'read', 'write'}),
    ttl = arg_int(at + 3, 'ttlMs', 1, 86400000),
    watch = arg_flag(at + 4, 'watch'),
    mark_pickup = arg_flag(at + 5, 'mark_pickup'),
    holder = ARGV[at + 6] or '',
  }
  if #waiters[i].holder > 1024 then bad_arg('holder', 'must be at most 1024 bytes') end
end

local now_ms, now_us = redis_now()
local floor = fence_floor(now_us) -- before the first write: it checks the caller's clock
local live, n, dead = holders_load(KEYS[1], now_ms, true)
local granted, stopped = {}, nil

local function answer(token, mode, rec)
  granted[#granted + 1] = {token = token, mode = mode, fence = rec.f, ttlMs = rec.ttl, expiresAt = rec.exp,
    count = mode == 'write' and rec.w or rec.r}
end

for _, w in ipairs(waiters) do
  local mine = live[w.token]
  if mine then
    if w.mark_pickup == '1' then
      mine.exp = fmt(now_ms + tonumber(mine.ttl))
      mine.lt = nil
      mine.pk = fmt(now_ms + PICKUP_MS)
      holders_put(KEYS[1], w.token, mine)
    end
    answer(w.token, w.mode, mine)
  else
    local has_writer = holders_first_end(live, function(rec) return rec.w > 0 end) ~= nil
    if (w.mode == 'read' and has_writer) or (w.mode == 'write' and n > 0) then
      stopped = w
      break
    end
    local fence
    if n > 0 then
      for _, rec in pairs(live) do fence = rec.f end -- readers share one fence
    else
      fence = issue_fence(KEYS[2], floor)
    end
    local rec = {w = 0, r = 0, ttl = fmt(w.ttl), exp = fmt(now_ms + w.ttl), f = fence, wt = w.watch}
    if w.mode == 'write' then rec.w = 1 else rec.r = 1 end
    if w.mark_pickup == '1' then rec.pk = fmt(now_ms + PICKUP_MS) end
    if w.holder ~= '' then rec.hl = w.holder end
    live[w.token] = rec
    n = n + 1
    holders_put(KEYS[1], w.token, rec)
    answer(w.token, w.mode, rec)
  end
end

local retry = ''
if stopped then
  gate_set(KEYS[3], stopped.token, holders_last_end(live) + REGISTRATION_GRACE_MS)
  local first
  if stopped.mode == 'read' then
    first = holders_first_end(live, function(rec) return rec.w > 0 end)
  else
    first = holders_first_end(live, function() return true end)
  end
  retry = fmt(math.max(first - now_ms, 1))
elseif more == '1' then
  gate_set(KEYS[3], '', now_ms + REGISTRATION_GRACE_MS)
else
  redis.call('DEL', KEYS[3])
end
holders_settle(KEYS[1], live, dead)
return {'status', 'ok', 'granted', cjson.encode(granted), 'retryAfterMs', retry}

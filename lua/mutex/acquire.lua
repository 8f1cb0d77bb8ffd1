-- mutex acquire: grant a free mutex, re-enter it, or (for the lock object)
-- queue behind the holder.
--
-- KEYS[1]  lock      hf:{mx:<ns>:<name>}          the mutex's one hash (lua/FIELDS.md): the lease (owner,
--                                                   count, fence, ttl, lt, exp, watch, pk, holder, ld, qf, rl),
--                                                   the last fence (fence, kept after the lease), the lock
--                                                   object's registered head waiter (nt, nl, nw, nm, nh, nd,
--                                                   nu) and a quorum's fence floor (ff); it outlives every
--                                                   lease (MUTEX_KEEP_MS, src/limits.ts), so a lease is held
--                                                   while owner is set and exp is ahead of Redis's time, a
--                                                   lapsed one (owner still set) holds everyone off until
--                                                   exp + ld, its lock-delay, and owner "" (exp "0") is
--                                                   released
-- KEYS[2]  fence     hf:{mx:<ns>:<name>}:fence     0.1's last fence (a key of its own then), read only when
--                                                   the hash keeps none, so fences keep rising from 0.1's;
--                                                   written only with a fence above Redis's clock
--                                                   (keep_legacy_fence), so 0.1's keep rising from 0.2's
-- KEYS[3]  request   hf:{mx:<ns>:<name>}:rq:<id>   a re-entry's answer, for retries (only
--                                                   passed, and only read, in mode "reenter")
-- KEYS[3]  watchers  hf:{mx:<ns>:<name>}:watchers  (KEYS[4] in mode "reenter") passed only by the
--                                                   Worker: exists while the lock object has watch
--                                                   sockets (lua/FIELDS.md); the library passes none
-- ARGV[1]  token: the new owner token, or the held token when re-entering
-- ARGV[2]  ttlMs of the lease (1 .. 86400000)
--          (kept and answered as sent: the library sends decimal digits)
-- ARGV[3]  mode: "new" (try-lock), "reenter", or "queue" (only the lock object: its head waiter)
-- ARGV[4]  watch: "1" when the lock object must hear of this lease's release (onExpire), else "0"
-- ARGV[5]  more: "1" when other waiters queue behind this one (queue mode), else "0"
-- ARGV[6]  mark_pickup: "1" to mark a queue-mode grant for pickup (the waiter waited), "0" when
--          it is granted on arrival (as alive as a try-lock's client)
-- ARGV[7]  holder: the holder label to keep with the lease (field holder), "" for none
-- ARGV[8]  lock_delay: ms (0 .. 60000) nobody is granted the lock after this lease lapses
--          (field ld); 0 for none
-- ARGV[9]  history: "1" to append each new grant to the hash's history (an election's: lua/FIELDS.md,
--          fields lp and l:<position>), "0" for none
--          ARGV[3..9] may be left off from the end where they are their defaults ("new", "0",
--          "0", "0", "", "0", "0"): each argument costs about as much as a small command, and the
--          usual try-lock sends only ARGV[1] and ARGV[2].
--
-- replies: JSON text on every path, so the body runs at the script's top level (tools/gen-lua-scripts.mjs)
-- Returns name/value pairs:
--   status granted, fence, ttlMs, expiresAt, count, and quorumFence when the lease's
--     hash has a quorum's agreed fence (qf; only ever on a grant already held); the
--     token is always ARGV[1], so it is not echoed; and watchers "1" when the
--     watchers key was passed and exists (the Worker then tells the lock object)
--   status busy, retryAfterMs, queued ("1" when the lock is free but a waiter is first),
--     and when held: holder (its label, "" for none) and expiresAt; when free but in a
--     lapsed lease's lock-delay: delayedUntil
--   status lost                      re-entry with a token that does not hold the lock
--
-- No barging: while the lock object has a waiter registered (nt, until nu), a
-- try-lock of a free lock is busy; only "queue" (the object, for its head) may
-- take it. Safe to run twice: a new or queued acquire whose token already owns
-- the lock is its own earlier grant and is answered again (a new acquire's
-- repeat, the client retrying, also marks it picked up); only a
-- re-entry (which counts) is remembered under its request id, and answered
-- again only while its lease stands (a retry after it lapsed is lost). Busy
-- and lost answers change nothing and are not remembered.
--
-- The usual grant (a released lock, no registered waiter) is TIME, HMGET,
-- HSET, PEXPIRE and its answer written as JSON text, and comes first: in
-- Redis's Lua a number/text conversion, a table, a closure or a library call
-- costs about as much as a small command, so that path converts one number
-- (the lease's end), builds no table and checks its arguments inline. A
-- fresh grant writes no count (absent: 1) and no watch (absent: "0"). A
-- release leaves the hash with its fence, so the next grant reads one key.

-- The usual path calls no function: in Redis's Lua each local function is a
-- closure made anew on every call of the script, so its checks raise their
-- errors inline, it reads the clock inline (redis_now in lua/prelude.lua),
-- and the prelude's functions are made below the mark, for every other path.
-- Its arguments, checked before the first write:
local token = ARGV[1]
if not token or #token < 1 or #token > 256 then error({err = 'ERR holdfast: token must be 1 to 256 bytes'}) end
local ttl_text = ARGV[2]
local ttl = tonumber(ttl_text)
if not ttl or ttl % 1 ~= 0 or ttl < 1 or ttl > 86400000 then
  error({err = 'ERR holdfast: ttlMs must be an integer from 1 to 86400000, got ' .. tostring(ttl_text)})
end

-- Redis's clock: µs digits, and ms.
local t = redis.call('TIME')
local us = t[2]
if #us < 6 then us = string.sub('00000', #us) .. us end
local now_us = t[1] .. us
local now_ms = tonumber(now_us)
now_ms = (now_ms - now_ms % 1000) / 1000

-- The usual grant: a try-lock (every argument after ttlMs its default) of a
-- released lock (owner "" or none: a release or take-back ends the lock-delay too)
-- with no waiter registered, whose last fence is behind Redis's clock and
-- the caller's clock not ahead of it: its fence is Redis's now in µs (digit
-- texts of one length compare as their numbers do). One read.
local lock = nil
if not ARGV[3] then
  lock = redis.call('HMGET', KEYS[1], 'owner', 'fence', 'nt')
  local last = lock[2]
  if (not lock[1] or lock[1] == '') and not lock[3] and last and #last == #now_us and last < now_us
    and #CALLER_CLOCK == #now_us and CALLER_CLOCK <= now_us then
    local exp = string.format('%d', now_ms + ttl)
    redis.call('HSET', KEYS[1], 'owner', token, 'fence', now_us, 'ttl', ttl_text, 'exp', exp)
    -- The hash outlives the lease's end by the fence's keep time (MUTEX_KEEP_MS), set by every write
    -- that moves the end: a 0.1 process's writes set the key's expiry to the lease's end.
    redis.call('PEXPIRE', KEYS[1], MUTEX_KEEP_MS_ARG)
    -- Fences are digits we stored, so the JSON text is built directly.
    local reply = '["status","granted","fence","' .. now_us .. '","ttlMs","' .. ttl_text .. '","expiresAt","' .. exp .. '","count","1"]'
    -- Only the Worker passes the watchers key; the library's grant pays one table read for it.
    if KEYS[3] and redis.call('EXISTS', KEYS[3]) == 1 then reply = string.sub(reply, 1, -2) .. ',"watchers","1"]' end
    return reply
  end
end

-- prelude below: the prelude functions only the rest uses (tools/gen-lua-scripts.mjs)

-- The other arguments, checked before the first write: the usual try-lock
-- sends only the first two, and the rest are their defaults, set without a check.
local mode, watch, more, mark_pickup, holder, lock_delay, history = 'new', '0', '0', '0', '', 0, '0'
if ARGV[3] then
  mode = ARGV[3]
  if mode ~= 'new' and mode ~= 'reenter' and mode ~= 'queue' then
    bad_arg('mode', 'must be one of new, reenter, queue, got ' .. mode)
  end
  watch = ARGV[4] or '0'
  if watch ~= '0' and watch ~= '1' then bad_arg('watch', 'must be 0 or 1, got ' .. watch) end
  more = ARGV[5] or '0'
  if more ~= '0' and more ~= '1' then bad_arg('more', 'must be 0 or 1, got ' .. more) end
  mark_pickup = ARGV[6] or '0'
  if mark_pickup ~= '0' and mark_pickup ~= '1' then bad_arg('mark_pickup', 'must be 0 or 1, got ' .. mark_pickup) end
  holder = ARGV[7] or ''
  -- (4096: an election's value, kept as its leader's label; the mutex's HTTP API allows labels of 1024 bytes)
  if #holder > 4096 then bad_arg('holder', 'must be at most 4096 bytes') end
  -- "0" (the usual) without a conversion.
  if ARGV[8] and ARGV[8] ~= '0' then
    lock_delay = tonumber(ARGV[8])
    if not lock_delay or lock_delay % 1 ~= 0 or lock_delay < 0 or lock_delay > 60000 then
      bad_arg('lock_delay', 'must be an integer from 0 to 60000, got ' .. ARGV[8])
    end
  end
  history = ARGV[9] or '0'
  if history ~= '0' and history ~= '1' then bad_arg('history', 'must be 0 or 1, got ' .. history) end
end
-- The caller's clock is checked (fence_floor) before the first write of any grant.
local floor = fence_floor(now_us)

if mode ~= 'reenter' and not lock then lock = redis.call('HMGET', KEYS[1], 'owner', 'fence', 'nt') end

-- A grant's answer, as on the usual path, with a quorum's agreed fence where the lease has one.
local function granted(fence, ttl_text, exp_text, count_text, qf)
  local tail = ']'
  if qf then tail = ',"quorumFence","' .. qf .. '"]' end
  return '["status","granted","fence","' .. fence .. '","ttlMs","' .. ttl_text .. '","expiresAt","' .. exp_text
    .. '","count","' .. count_text .. '"' .. tail
end

-- A grant's answer with watchers "1" when the Worker passed the watchers key (KEYS[i]) and it exists.
local function noted(reply, i)
  if KEYS[i] and redis.call('EXISTS', KEYS[i]) == 1 then return string.sub(reply, 1, -2) .. ',"watchers","1"]' end
  return reply
end

if mode == 'reenter' then
  local held = redis.call('HMGET', KEYS[1], 'owner', 'count', 'fence', 'qf', 'exp')
  -- A lapsed lease keeps its owner field until the next grant: held only while exp is ahead. Checked
  -- before a remembered answer is replayed: a retry that comes after the lease lapsed (and another
  -- took the lock) must not be told it holds it.
  if held[1] ~= token or tonumber(held[5]) <= now_ms then return '["status","lost"]' end
  local seen = redis.call('GET', KEYS[3])
  if seen then return seen end
  local count = fmt(tonumber(held[2] or '1') + 1)
  local exp_ms = now_ms + ttl
  local exp = fmt(exp_ms)
  redis.call('HSET', KEYS[1], 'count', count, 'ttl', ttl_text, 'exp', exp)
  if holder ~= '' then redis.call('HSET', KEYS[1], 'holder', holder) end
  if watch == '1' then redis.call('HSET', KEYS[1], 'watch', '1') end
  -- The holder is alive: its grant is picked up; the lease is ttl long again; its lock-delay is this acquire's.
  redis.call('HDEL', KEYS[1], 'pk', 'lt')
  if lock_delay > 0 then redis.call('HSET', KEYS[1], 'ld', fmt(lock_delay)) else redis.call('HDEL', KEYS[1], 'ld') end
  redis.call('PEXPIRE', KEYS[1], MUTEX_KEEP_MS_ARG)
  return remember(KEYS[3], noted(granted(held[3], ttl_text, exp, count, held[4]), 4))
end

-- A released lock (owner "") has no lease to read. Else the rest of what this
-- path may need, in one read: the lease (live or lapsed), the registered
-- waiter's end, and the quorum's fences.
local owner = lock[1]
if owner == '' then owner = nil end
local lease = (owner or lock[3]) and redis.call('HMGET', KEYS[1], 'exp', 'ttl', 'lt', 'holder', 'ld', 'qf', 'ff', 'nu') or {}
local exp_text = lease[1]
local exp = nil
if owner then
  exp = lease_end(tonumber(exp_text), tonumber(lease[3] or lease[2]), now_ms)
  -- A lease whose end has passed lapsed: the lock is free, and its fields go with the next grant.
  if exp <= now_ms then owner = nil end
end

if not owner then
  -- A lapsed lease's lock-delay holds everyone off until its end plus the delay.
  if exp and lease[5] then
    local delayed_until = exp + tonumber(lease[5])
    if delayed_until > now_ms then
      return '["status","busy","retryAfterMs","' .. fmt(delayed_until - now_ms) .. '","queued","0","delayedUntil","' .. fmt(delayed_until) .. '"]'
    end
  end
  -- A registration lives until nu: the object renews it while its waiter waits.
  local registered = lock[3] and tonumber(lease[8] or '0') > now_ms
  if mode == 'new' and registered then
    -- Someone waits: the object is about to grant its head.
    return '["status","busy","retryAfterMs","100","queued","1"]'
  end
  local fence = next_fence(mutex_last_fence(lock[2] or redis.call('GET', KEYS[2]), lease[6], lease[7]), floor)
  keep_legacy_fence(KEYS[2], fence, now_us)
  local new_exp_ms = now_ms + ttl
  local new_exp = fmt(new_exp_ms)
  -- What a lapsed lease, a quorum's floor (now in fence) and a registration (granted now, or
  -- lapsed) left behind; a released lock with no registration left nothing.
  if (lock[1] and lock[1] ~= '') or lock[3] then
    redis.call('HDEL', KEYS[1], 'count', 'lt', 'watch', 'pk', 'holder', 'ld', 'qf', 'rl', 'ff',
      'nt', 'nl', 'nw', 'nm', 'nh', 'nd', 'nu')
  end
  redis.call('HSET', KEYS[1], 'owner', token, 'fence', fence, 'ttl', ttl_text, 'exp', new_exp)
  if watch == '1' then redis.call('HSET', KEYS[1], 'watch', '1') end
  if holder ~= '' then redis.call('HSET', KEYS[1], 'holder', holder) end
  if lock_delay > 0 then redis.call('HSET', KEYS[1], 'ld', fmt(lock_delay)) end
  if mode == 'queue' and mark_pickup == '1' then redis.call('HSET', KEYS[1], 'pk', fmt(now_ms + PICKUP_MS)) end
  if history == '1' then history_add(KEYS[1], fence, holder, now_ms) end
  redis.call('PEXPIRE', KEYS[1], MUTEX_KEEP_MS_ARG)
  return noted(granted(fence, ttl_text, new_exp, '1'), 3)
end

if owner == token then
  local rest = redis.call('HMGET', KEYS[1], 'count', 'fence', 'qf')
  local answered_exp = exp_text
  if mode == 'new' then
    -- This acquire's own earlier grant (the client's retry): it is alive, so
    -- a grant from the line is picked up.
    redis.call('HDEL', KEYS[1], 'pk')
  elseif mode == 'queue' and mark_pickup == '1' then
    -- A grant the object learns of only now (a handoff whose release news was
    -- lost, or its own step whose answer was lost): the waiter gets its whole
    -- lease from now, as its answer will say, and must pick it up (marked pk
    -- even if that step granted it unmarked: nobody has its token yet).
    answered_exp = fmt(now_ms + tonumber(lease[2]))
    redis.call('HSET', KEYS[1], 'exp', answered_exp, 'pk', fmt(now_ms + PICKUP_MS))
    redis.call('HDEL', KEYS[1], 'lt')
    redis.call('PEXPIRE', KEYS[1], MUTEX_KEEP_MS_ARG)
  end
  return noted(granted(rest[2], lease[2], answered_exp, rest[1] or '1', rest[3]), 3)
end

-- Held by another. The busy answer formats only what it must: the stored end
-- as it is (unless the clock rule moves it), no label as "".
if exp < tonumber(exp_text) then
  exp_text = fmt(exp)
  redis.call('HSET', KEYS[1], 'exp', exp_text)
end
if mode == 'queue' then
  -- The object's head waiter: the release hands the lock straight to it. Registered
  -- past the holder's end and its lock-delay, if it lapses: the object renews it when it wakes.
  redis.call('HSET', KEYS[1], 'nt', token, 'nl', ttl_text, 'nw', watch, 'nm', more, 'nh', holder, 'nd', fmt(lock_delay),
    'nu', fmt(exp + tonumber(lease[5] or '0') + REGISTRATION_GRACE_MS), 'watch', '1')
end
-- The label is any text the caller chose: JSON-encoded, not spliced.
local label = '""'
if lease[4] then label = cjson.encode(lease[4]) end
return '["status","busy","retryAfterMs","' .. fmt(math.max(exp - now_ms, 1)) .. '","queued","0","holder",' .. label
  .. ',"expiresAt","' .. exp_text .. '"]'

-- mutex acquire: grant a free mutex, re-enter it, or (for the lock object)
-- queue behind the holder.
--
-- KEYS[1]  lock      hf:{mx:<ns>:<name>}          hash: owner, count, fence, ttl, exp, watch, pk, holder,
--                                                   lt (a heartbeat's ttl: the lease's length since),
--                                                   and qf on a quorum's databases (raise_fence.lua)
-- KEYS[2]  fence     hf:{mx:<ns>:<name>}:fence     the last fence, kept FENCE_KEEP_MS after a grant
-- KEYS[3]  next      hf:{mx:<ns>:<name>}:next      hash: token, ttl, watch, more, holder of the lock object's
--                                                   head waiter; a release hands the lock to it
--                                                   (token "": more waiters, none registered yet)
-- KEYS[4]  delay     hf:{mx:<ns>:<name>}:delay     a lease's lock-delay (ms), kept until its end plus
--                                                   the delay: while it lives, a free lock is not
--                                                   granted (a release or take-back deletes it)
-- KEYS[5]  request   hf:{mx:<ns>:<name>}:rq:<id>   a re-entry's answer, for retries (only
--                                                   passed, and only read, in mode "reenter")
-- KEYS[5]  watchers  hf:{mx:<ns>:<name>}:watchers  (KEYS[6] in mode "reenter") passed only by the
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
--          ARGV[3..8] may be left off from the end where they are their defaults ("new", "0",
--          "0", "0", "", "0"): each argument costs about as much as a small command, and the
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
-- No barging: while the lock object has a waiter registered in KEYS[3], a
-- try-lock of a free lock is busy; only "queue" (the object, for its head) may
-- take it. Safe to run twice: a new or queued acquire whose token already owns
-- the lock is its own earlier grant and is answered again (a new acquire's
-- repeat, the client retrying, also marks it picked up); only a
-- re-entry (which counts) is remembered under its request id. Busy and lost
-- answers change nothing and are not remembered.
--
-- The usual grant (a free lock, no waiter) is TIME, EXISTS, SET ... GET, HSET,
-- PEXPIREAT and its answer written as JSON text, and comes first: in
-- Redis's Lua a number/text conversion, a table, a closure or a library call
-- costs about as much as a small command, so that path converts one number
-- (the lease's end), builds no table and checks its arguments inline. A fresh
-- grant writes no count (absent: 1) and no watch (absent: "0").

-- Arguments, checked before the first write. The usual try-lock sends only
-- the first two: the rest are their defaults, set without a check.
local token = ARGV[1]
if not token or #token < 1 or #token > 256 then bad_arg('token', 'must be 1 to 256 bytes') end
local ttl_text = ARGV[2]
local ttl = tonumber(ttl_text)
if not ttl or ttl % 1 ~= 0 or ttl < 1 or ttl > 86400000 then
  bad_arg('ttlMs', 'must be an integer from 1 to 86400000, got ' .. tostring(ttl_text))
end
local mode, watch, more, mark_pickup, holder, lock_delay = 'new', '0', '0', '0', '', 0
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
  if #holder > 1024 then bad_arg('holder', 'must be at most 1024 bytes') end
  -- "0" (the usual) without a conversion.
  if ARGV[8] and ARGV[8] ~= '0' then
    lock_delay = tonumber(ARGV[8])
    if not lock_delay or lock_delay % 1 ~= 0 or lock_delay < 0 or lock_delay > 60000 then
      bad_arg('lock_delay', 'must be an integer from 0 to 60000, got ' .. ARGV[8])
    end
  end
end

local now_ms, now_us = redis_now()

-- A free lock (no owner), asked for anew or by the object's head: granted
-- unless a lapsed lease's lock-delay holds everyone off, or (a try-lock) a
-- waiter is registered. One EXISTS for the lock and both keys that could hold
-- it back, on the usual path, where none exists.
local owner, lease = nil, nil
if mode ~= 'reenter' then
  local free = redis.call('EXISTS', KEYS[1], KEYS[3], KEYS[4]) == 0
  if not free then
    -- What a busy answer needs, at once: the lease's length as of its last
    -- write (a heartbeat's lt, or the acquire's ttl), its label and lock-delay.
    lease = redis.call('HMGET', KEYS[1], 'owner', 'exp', 'ttl', 'lt', 'holder', 'ld')
    owner = lease[1]
    if not owner then
      -- The delay key holds its own end (ms); one written by an older script held the delay: its time to live says the end.
      local delayed_until = tonumber(redis.call('GET', KEYS[4]) or '')
      if delayed_until and delayed_until <= now_ms then delayed_until = now_ms + redis.call('PTTL', KEYS[4]) end
      if delayed_until and delayed_until > now_ms then
        return '["status","busy","retryAfterMs","' .. fmt(delayed_until - now_ms) .. '","queued","0","delayedUntil","' .. fmt(delayed_until) .. '"]'
      end
      if mode == 'new' and redis.call('EXISTS', KEYS[3]) == 1 then
        -- Someone waits: the object is about to grant its head.
        return '["status","busy","retryAfterMs","100","queued","1"]'
      end
      free = true
    end
  end
  if free then
    -- The caller's clock is checked (fence_floor) before this branch's first write, the fence's.
    local fence = issue_fence(KEYS[2], fence_floor(now_us))
    local exp_ms = now_ms + ttl
    local exp = fmt(exp_ms)
    redis.call('HSET', KEYS[1], 'owner', token, 'fence', fence, 'ttl', ttl_text, 'exp', exp)
    if watch == '1' then redis.call('HSET', KEYS[1], 'watch', '1') end
    if holder ~= '' then redis.call('HSET', KEYS[1], 'holder', holder) end
    -- Exactly the expiresAt we answer, so every reply agrees with the key.
    redis.call('PEXPIREAT', KEYS[1], exp)
    if lock_delay > 0 then set_lock_delay(KEYS[1], KEYS[4], lock_delay, exp_ms) end
    if mode == 'queue' then
      redis.call('DEL', KEYS[3])
      if mark_pickup == '1' then redis.call('HSET', KEYS[1], 'pk', fmt(now_ms + PICKUP_MS)) end
    end
    -- Fences are digits we stored, so the JSON text is built directly.
    local reply = '["status","granted","fence","' .. fence .. '","ttlMs","' .. ttl_text .. '","expiresAt","' .. exp .. '","count","1"]'
    -- Only the Worker passes the watchers key; the library's grant pays one table read for it.
    if KEYS[5] and redis.call('EXISTS', KEYS[5]) == 1 then reply = string.sub(reply, 1, -2) .. ',"watchers","1"]' end
    return reply
  end
end

-- prelude below: the prelude functions only the rest uses (tools/gen-lua-scripts.mjs)

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
  local lock = redis.call('HMGET', KEYS[1], 'owner', 'count', 'fence', 'qf')
  local seen = redis.call('GET', KEYS[5])
  if seen then return seen end
  if lock[1] ~= token then return '["status","lost"]' end
  local count = fmt(tonumber(lock[2] or '1') + 1)
  local exp_ms = now_ms + ttl
  local exp = fmt(exp_ms)
  redis.call('HSET', KEYS[1], 'count', count, 'ttl', ttl_text, 'exp', exp)
  if holder ~= '' then redis.call('HSET', KEYS[1], 'holder', holder) end
  if watch == '1' then redis.call('HSET', KEYS[1], 'watch', '1') end
  redis.call('HDEL', KEYS[1], 'pk', 'lt') -- the holder is alive: its grant is picked up; the lease is ttl long again
  redis.call('PEXPIREAT', KEYS[1], exp)
  set_lock_delay(KEYS[1], KEYS[4], lock_delay, exp_ms)
  return remember(KEYS[5], noted(granted(lock[3], ttl_text, exp, count, lock[4]), 6))
end

if owner == token then
  local rest = redis.call('HMGET', KEYS[1], 'count', 'fence', 'qf')
  local exp = lease[2]
  if mode == 'new' then
    -- This acquire's own earlier grant (the client's retry): it is alive, so
    -- a grant from the line is picked up.
    redis.call('HDEL', KEYS[1], 'pk')
  elseif mode == 'queue' and mark_pickup == '1' then
    -- A grant the object learns of only now (a handoff whose release news was
    -- lost, or its own step whose answer was lost): the waiter gets its whole
    -- lease from now, as its answer will say, and must pick it up (marked pk
    -- even if that step granted it unmarked: nobody has its token yet).
    exp = fmt(now_ms + tonumber(lease[3]))
    redis.call('HSET', KEYS[1], 'exp', exp, 'pk', fmt(now_ms + PICKUP_MS))
    redis.call('HDEL', KEYS[1], 'lt')
    redis.call('PEXPIREAT', KEYS[1], exp)
  end
  return noted(granted(rest[2], lease[3], exp, rest[1] or '1', rest[3]), 5)
end

-- Held by another. The busy answer formats only what it must: the stored end
-- as it is (unless the clock rule moves it), no label as "".
local exp_text = lease[2]
local exp = tonumber(exp_text)
local stands = lease_end(exp, tonumber(lease[4] or lease[3]), now_ms)
if stands < exp then
  exp = stands
  exp_text = fmt(exp)
  redis.call('HSET', KEYS[1], 'exp', exp_text)
  redis.call('PEXPIREAT', KEYS[1], exp_text)
end
if mode == 'queue' then
  -- The object's head waiter: the release hands the lock straight to it.
  redis.call('HSET', KEYS[3], 'token', token, 'ttl', ttl_text, 'watch', watch, 'more', more, 'holder', holder, 'ld', fmt(lock_delay))
  -- Past the holder's end and its lock-delay, if it lapses: the object renews it when it wakes.
  redis.call('PEXPIREAT', KEYS[3], fmt(exp + tonumber(lease[6] or '0') + REGISTRATION_GRACE_MS))
  redis.call('HSET', KEYS[1], 'watch', '1')
end
-- The label is any text the caller chose: JSON-encoded, not spliced.
local label = '""'
if lease[5] then label = cjson.encode(lease[5]) end
return '["status","busy","retryAfterMs","' .. fmt(math.max(exp - now_ms, 1)) .. '","queued","0","holder",' .. label
  .. ',"expiresAt","' .. exp_text .. '"]'

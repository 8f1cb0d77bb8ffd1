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
-- ARGV[1]  token: the new owner token, or the held token when re-entering
-- ARGV[2]  ttlMs of the lease (1 .. 86400000)
-- ARGV[3]  mode: "new" (try-lock), "reenter", or "queue" (only the lock object: its head waiter)
-- ARGV[4]  watch: "1" when the lock object must hear of this lease's release (onExpire), else "0"
-- ARGV[5]  more: "1" when other waiters queue behind this one (queue mode), else "0"
-- ARGV[6]  mark_pickup: "1" to mark a queue-mode grant for pickup (the waiter waited), "0" when
--          it is granted on arrival (as alive as a try-lock's client)
-- ARGV[7]  holder: the holder label to keep with the lease (field holder), "" for none
-- ARGV[8]  lock_delay: ms (0 .. 60000) nobody is granted the lock after this lease lapses
--          (field ld); 0 for none
--
-- Returns name/value pairs:
--   status granted, fence, ttlMs, expiresAt, count, and quorumFence when the lease's
--     hash has a quorum's agreed fence (qf; only ever on a grant already held); the
--     token is always ARGV[1], so it is not echoed
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
-- The usual grant (a free lock, no waiter) is TIME, HMGET, EXISTS, SET ... GET,
-- HSET, PEXPIREAT and its answer written as JSON text: in Redis's Lua a
-- number/text conversion, a table or a library call costs about as much as a
-- small command, so that path converts each number once and builds no table.

local token = arg_str(1, 'token', 256)
local ttl = arg_int(2, 'ttlMs', 1, 86400000)
local mode = ARGV[3]
if mode ~= 'new' and mode ~= 'reenter' and mode ~= 'queue' then
  bad_arg('mode', 'must be one of new, reenter, queue, got ' .. tostring(mode))
end
local watch = arg_flag(4, 'watch')
local more = arg_flag(5, 'more')
local mark_pickup = arg_flag(6, 'mark_pickup')
local holder = ARGV[7] or ''
if #holder > 1024 then bad_arg('holder', 'must be at most 1024 bytes') end
-- "0" (the usual) without a conversion: a number/text conversion costs about a small command.
local lock_delay = 0
if ARGV[8] ~= '0' then lock_delay = arg_int(8, 'lock_delay', 0, 60000) end

local now_ms, now_us = redis_now()

-- A grant's answer. Fences and quorum fences are digits we stored, so the
-- JSON text is built directly.
local function granted(fence, ttl_text, exp_text, count_text, qf)
  local tail = ']'
  if qf then tail = ',"quorumFence","' .. qf .. '"]' end
  return '["status","granted","fence","' .. fence .. '","ttlMs","' .. ttl_text .. '","expiresAt","' .. exp_text
    .. '","count","' .. count_text .. '"' .. tail
end

-- The owner and expiry decide every path; a re-entry needs the rest at once.
local lock
if mode == 'reenter' then
  lock = redis.call('HMGET', KEYS[1], 'owner', 'exp', 'count', 'fence', 'qf')
else
  lock = redis.call('HMGET', KEYS[1], 'owner', 'exp')
end
local owner = lock[1]

if mode == 'reenter' then
  local seen = redis.call('GET', KEYS[5])
  if seen then return seen end
  if owner ~= token then return {'status', 'lost'} end
  local count = fmt(tonumber(lock[3] or '1') + 1)
  local exp = fmt(now_ms + ttl)
  local ttl_text = fmt(ttl)
  redis.call('HSET', KEYS[1], 'count', count, 'ttl', ttl_text, 'exp', exp)
  if holder ~= '' then redis.call('HSET', KEYS[1], 'holder', holder) end
  if watch == '1' then redis.call('HSET', KEYS[1], 'watch', '1') end
  redis.call('HDEL', KEYS[1], 'pk', 'lt') -- the holder is alive: its grant is picked up; the lease is ttl long again
  redis.call('PEXPIREAT', KEYS[1], exp)
  set_lock_delay(KEYS[1], KEYS[4], lock_delay, tonumber(exp))
  return remember(KEYS[5], granted(lock[4], ttl_text, exp, count, lock[5]))
end

if owner == token then
  local rest = redis.call('HMGET', KEYS[1], 'count', 'fence', 'ttl', 'qf')
  local exp = lock[2]
  if mode == 'new' then
    -- This acquire's own earlier grant (the client's retry): it is alive, so
    -- a grant from the line is picked up.
    redis.call('HDEL', KEYS[1], 'pk')
  elseif mode == 'queue' and mark_pickup == '1' then
    -- A grant the object learns of only now (a handoff whose release news was
    -- lost, or its own step whose answer was lost): the waiter gets its whole
    -- lease from now, as its answer will say, and must pick it up (marked pk
    -- even if that step granted it unmarked: nobody has its token yet).
    exp = fmt(now_ms + tonumber(rest[3]))
    redis.call('HSET', KEYS[1], 'exp', exp, 'pk', fmt(now_ms + PICKUP_MS))
    redis.call('HDEL', KEYS[1], 'lt')
    redis.call('PEXPIREAT', KEYS[1], exp)
  end
  return granted(rest[2], rest[3], exp, rest[1] or '1', rest[4])
end

if owner then
  local exp = tonumber(lock[2])
  -- The lease's length as of its last write: a heartbeat's (lt) or the acquire's.
  local len = redis.call('HMGET', KEYS[1], 'ttl', 'lt', 'holder', 'ld')
  local stands = lease_end(exp, tonumber(len[2] or len[1]), now_ms)
  if stands < exp then
    exp = stands
    redis.call('HSET', KEYS[1], 'exp', fmt(exp))
    redis.call('PEXPIREAT', KEYS[1], fmt(exp))
  end
  if mode == 'queue' then
    -- The object's head waiter: the release hands the lock straight to it.
    redis.call('HSET', KEYS[3], 'token', token, 'ttl', fmt(ttl), 'watch', watch, 'more', more, 'holder', holder, 'ld', fmt(lock_delay))
    -- Past the holder's end and its lock-delay, if it lapses: the object renews it when it wakes.
    redis.call('PEXPIREAT', KEYS[3], fmt(exp + tonumber(len[4] or '0') + REGISTRATION_GRACE_MS))
    redis.call('HSET', KEYS[1], 'watch', '1')
  end
  -- The label is any text the caller chose: JSON-encoded, not spliced.
  return '["status","busy","retryAfterMs","' .. fmt(math.max(exp - now_ms, 1)) .. '","queued","0","holder",'
    .. cjson.encode(len[3] or '') .. ',"expiresAt","' .. fmt(exp) .. '"]'
end

-- Free. A lapsed lease's lock-delay holds everyone off, waiters included; one
-- EXISTS for both keys on the usual path, where neither exists.
if redis.call('EXISTS', KEYS[3], KEYS[4]) > 0 or mode == 'queue' then
  local delay_left = redis.call('PTTL', KEYS[4])
  if delay_left > 0 then
    return '["status","busy","retryAfterMs","' .. fmt(delay_left) .. '","queued","0","delayedUntil","' .. fmt(now_ms + delay_left) .. '"]'
  end
  if mode == 'new' and redis.call('EXISTS', KEYS[3]) == 1 then
    -- Someone waits: the object is about to grant its head.
    return '["status","busy","retryAfterMs","100","queued","1"]'
  end
end

local fence = issue_fence(KEYS[2], now_us)
local exp = fmt(now_ms + ttl)
local ttl_text = fmt(ttl)
redis.call('HSET', KEYS[1], 'owner', token, 'count', '1', 'fence', fence, 'ttl', ttl_text, 'exp', exp, 'watch', watch)
if holder ~= '' then redis.call('HSET', KEYS[1], 'holder', holder) end
-- Exactly the expiresAt we answer, so every reply agrees with the key.
redis.call('PEXPIREAT', KEYS[1], exp)
if lock_delay > 0 then set_lock_delay(KEYS[1], KEYS[4], lock_delay, tonumber(exp)) end
if mode == 'queue' then
  redis.call('DEL', KEYS[3])
  if mark_pickup == '1' then redis.call('HSET', KEYS[1], 'pk', fmt(now_ms + PICKUP_MS)) end
end
return granted(fence, ttl_text, exp, '1')

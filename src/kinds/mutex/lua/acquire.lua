-- mutex acquire: grant a free mutex, re-enter it, or (for the lock object)
-- queue behind the holder.
--
-- KEYS[1]  lock      hf:{mx:<ns>:<name>}          hash: owner, count, fence, ttl, exp, watch, pk,
--                                                   and qf on a quorum's databases (raise_fence.lua)
-- KEYS[2]  fence     hf:{mx:<ns>:<name>}:fence     the last fence, kept FENCE_KEEP_MS after a grant
-- KEYS[3]  next      hf:{mx:<ns>:<name>}:next      hash: token, ttl, watch, more of the lock object's
--                                                   head waiter; a release hands the lock to it
--                                                   (token "": more waiters, none registered yet)
-- KEYS[4]  request   hf:{mx:<ns>:<name>}:rq:<id>   a re-entry's answer, for retries (only
--                                                   passed, and only read, in mode "reenter")
-- ARGV[1]  token: the new owner token, or the held token when re-entering
-- ARGV[2]  ttlMs of the lease (1 .. 86400000)
-- ARGV[3]  mode: "new" (try-lock), "reenter", or "queue" (only the lock object: its head waiter)
-- ARGV[4]  watch: "1" when the lock object must hear of this lease's release (onExpire), else "0"
-- ARGV[5]  more: "1" when other waiters queue behind this one (queue mode), else "0"
-- ARGV[6]  mark: "1" to mark a queue-mode grant for pickup (the waiter waited), "0" when
--          it is granted on arrival (as alive as a try-lock's client)
--
-- Returns name/value pairs:
--   status granted, token, fence, ttlMs, expiresAt, count, and quorumFence when the
--     lease's hash has a quorum's agreed fence (qf; only ever on a grant already held)
--   status busy, retryAfterMs, queued ("1" when the lock is free but a waiter is first)
--   status lost                      re-entry with a token that does not hold the lock
--
-- No barging: while the lock object has a waiter registered in KEYS[3], a
-- try-lock of a free lock is busy; only "queue" (the object, for its head) may
-- take it. Safe to run twice: a new or queued acquire whose token already owns
-- the lock is its own earlier grant and is answered again (a new acquire's
-- repeat, the client retrying, also marks it picked up); only a
-- re-entry (which counts) is remembered under its request id. Busy and lost
-- answers change nothing and are not remembered.

local token = arg_str(1, 'token', 256)
local ttl = arg_int(2, 'ttlMs', 1, 86400000)
local mode = arg_one_of(3, 'mode', {'new', 'reenter', 'queue'})
local watch = arg_one_of(4, 'watch', {'0', '1'})
local more = arg_one_of(5, 'more', {'0', '1'})
local mark = arg_one_of(6, 'mark', {'0', '1'})

local now_ms, now_us = redis_now()

local function granted(owner, fence, lease_ttl, exp, count, qf)
  local r = {'status', 'granted', 'token', owner, 'fence', fence, 'ttlMs', fmt(lease_ttl), 'expiresAt', fmt(exp), 'count', fmt(count)}
  if qf then
    r[#r + 1] = 'quorumFence'
    r[#r + 1] = qf
  end
  return r
end

local lock = redis.call('HMGET', KEYS[1], 'owner', 'count', 'fence', 'ttl', 'exp', 'qf')
local owner = lock[1]

if mode == 'reenter' then
  local seen = redis.call('GET', KEYS[4])
  if seen then return seen end
  if owner ~= token then return {'status', 'lost'} end
  local count = redis.call('HINCRBY', KEYS[1], 'count', 1)
  redis.call('HSET', KEYS[1], 'ttl', fmt(ttl), 'exp', fmt(now_ms + ttl))
  if watch == '1' then redis.call('HSET', KEYS[1], 'watch', '1') end
  redis.call('HDEL', KEYS[1], 'pk') -- the holder is alive: its grant is picked up
  redis.call('PEXPIREAT', KEYS[1], fmt(now_ms + ttl))
  local r = granted(token, lock[3], ttl, now_ms + ttl, count, lock[6])
  return remember(KEYS[4], r)
end

if owner == token then
  local lease_ttl, exp = tonumber(lock[4]), tonumber(lock[5])
  if mode == 'new' then
    -- This acquire's own earlier grant (the client's retry): it is alive, so
    -- a grant from the line is picked up.
    redis.call('HDEL', KEYS[1], 'pk')
  elseif mode == 'queue' and mark == '1' then
    -- A grant the object learns of only now (a handoff whose release news was
    -- lost, or its own step whose answer was lost): the waiter gets its whole
    -- lease from now, as its answer will say, and must pick it up (marked pk
    -- even if that step granted it unmarked: nobody has its token yet).
    exp = now_ms + lease_ttl
    redis.call('HSET', KEYS[1], 'exp', fmt(exp), 'pk', fmt(now_ms + PICKUP_MS))
    redis.call('PEXPIREAT', KEYS[1], fmt(exp))
  end
  return granted(token, lock[3], lease_ttl, exp, tonumber(lock[2]), lock[6])
end

if owner then
  local exp = tonumber(lock[5])
  if mode == 'queue' then
    -- The object's head waiter: the release hands the lock straight to it.
    local registered_until = fmt(exp + REGISTRATION_GRACE_MS)
    redis.call('HSET', KEYS[3], 'token', token, 'ttl', fmt(ttl), 'watch', watch, 'more', more)
    redis.call('PEXPIREAT', KEYS[3], registered_until)
    redis.call('HSET', KEYS[1], 'watch', '1')
  end
  return {'status', 'busy', 'retryAfterMs', fmt(math.max(exp - now_ms, 1)), 'queued', '0'}
end

if mode == 'new' and redis.call('EXISTS', KEYS[3]) == 1 then
  -- Free, but someone waits: the object is about to grant its head.
  return {'status', 'busy', 'retryAfterMs', '100', 'queued', '1'}
end

local fence = issue_fence(KEYS[2], now_us)
redis.call('HSET', KEYS[1], 'owner', token, 'count', '1', 'fence', fmt(fence), 'ttl', fmt(ttl), 'exp', fmt(now_ms + ttl), 'watch', watch)
-- Exactly the expiresAt we answer, so every reply agrees with the key.
redis.call('PEXPIREAT', KEYS[1], fmt(now_ms + ttl))
if mode == 'queue' then
  redis.call('DEL', KEYS[3])
  if mark == '1' then redis.call('HSET', KEYS[1], 'pk', fmt(now_ms + PICKUP_MS)) end
end
return granted(token, fmt(fence), ttl, now_ms + ttl, 1)

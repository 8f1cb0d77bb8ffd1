-- mutex release: drop one level of the holder's re-entrant hold; at depth 0
-- hand the lock to the lock object's registered waiter, or delete it.
-- Compare-and-delete: never touches another holder's lock.
--
-- KEYS[1]  lock     hf:{mx:<ns>:<name>}      its field rl: KEYS[4] of the last inner release
-- KEYS[2]  fence    hf:{mx:<ns>:<name>}:fence
-- KEYS[3]  next     hf:{mx:<ns>:<name>}:next
-- KEYS[4]  request  hf:{mx:<ns>:<name>}:rq:<id>
-- KEYS[5]  ended    hf:{mx:<ns>:<name>}:ended   set of watched fences released on purpose, kept ENDED_KEEP_MS
-- ARGV[1]  token
--
-- Returns name/value pairs:
--   status ok, released "1"|"0", count, fence, watched "1"|"0", and quorumFence on a
--     quorum's database (see raise_fence.lua)
--     and when handed over: handedTo (token), handedFence, handedTtlMs, handedExpiresAt
--   status lost
--
-- Handing over inside the release costs the next waiter no round trip of its
-- own. Safe to run twice: every ok answer is remembered under the request id.
-- A retried final release finds the lease gone and replays it; a retried
-- inner release (which would otherwise drop two levels) finds its id on the
-- lease (field rl) and replays it. Lost is not remembered. The usual release
-- (one level, unwatched) is HMGET, DEL, SET: the waiter is read only behind a
-- watched lease, the clock only for a handoff.

local token = arg_str(1, 'token', 256)

local lock = redis.call('HMGET', KEYS[1], 'owner', 'fence', 'watch', 'qf', 'count', 'rl')
if lock[1] ~= token or lock[6] == KEYS[4] then
  -- Not (or no longer) this token's, or this very request already ran: its
  -- remembered answer if it did, else lost.
  local seen = redis.call('GET', KEYS[4])
  if seen then return seen end
  return {'status', 'lost'}
end
local watched = lock[3] or '0'
-- The fence the lease's watch knows it by: a quorum's agreed one where there is one.
local lease_fence = lock[4] or lock[2]

-- The reply, with the quorum's agreed fence, remembered for a retry.
local function answer(r)
  if lock[4] then
    r[#r + 1] = 'quorumFence'
    r[#r + 1] = lock[4]
  end
  return remember(KEYS[4], r)
end

local count = tonumber(lock[5] or '1') - 1
if count > 0 then
  redis.call('HSET', KEYS[1], 'count', fmt(count), 'rl', KEYS[4])
  return answer({'status', 'ok', 'released', '0', 'count', fmt(count), 'fence', lock[2], 'watched', watched})
end

redis.call('DEL', KEYS[1])
if watched == '1' then
  redis.call('SADD', KEYS[5], lease_fence)
  redis.call('PEXPIRE', KEYS[5], fmt(ENDED_KEEP_MS))
end
-- A registered waiter exists only behind a watched lease: registering (acquire.lua,
-- queue mode) marks the lease it waits behind, and no grant to another token
-- leaves a registration in place. So an unwatched lease has nobody to hand to.
local nx = watched == '1' and redis.call('HMGET', KEYS[3], 'token', 'ttl', 'watch', 'more') or {}
if not nx[1] or nx[1] == '' then
  return answer({'status', 'ok', 'released', '1', 'count', '0', 'fence', lock[2], 'watched', watched})
end

local now_ms, now_us = redis_now()
local ttl = tonumber(nx[2])
local fence = issue_fence(KEYS[2], now_us)
redis.call('HSET', KEYS[1], 'owner', nx[1], 'count', '1', 'fence', fmt(fence), 'ttl', fmt(ttl),
  'exp', fmt(now_ms + ttl), 'watch', nx[3] or '0', 'pk', fmt(now_ms + PICKUP_MS))
redis.call('PEXPIREAT', KEYS[1], fmt(now_ms + ttl))
redis.call('DEL', KEYS[3])
if nx[4] == '1' then
  -- Others wait behind the new holder: hold try-locks back until the object
  -- registers its next head, which it does right after this handoff. Short-
  -- lived, so it cannot outlive the line it stands for.
  redis.call('HSET', KEYS[3], 'token', '', 'more', '1')
  redis.call('PEXPIREAT', KEYS[3], fmt(now_ms + REGISTRATION_GRACE_MS))
end
return answer({'status', 'ok', 'released', '1', 'count', '0', 'fence', lock[2], 'watched', '1',
  'handedTo', nx[1], 'handedFence', fmt(fence), 'handedTtlMs', fmt(ttl), 'handedExpiresAt', fmt(now_ms + ttl)})

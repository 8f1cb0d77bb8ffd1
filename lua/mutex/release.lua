-- mutex release: drop one level of the holder's re-entrant hold; at depth 0
-- hand the lock to the lock object's registered waiter, or delete it.
-- Compare-and-delete: never touches another holder's lock.
--
-- KEYS[1]  lock     hf:{mx:<ns>:<name>}      its field rl: KEYS[4] of the last inner release
-- KEYS[2]  fence    hf:{mx:<ns>:<name>}:fence
-- KEYS[3]  next     hf:{mx:<ns>:<name>}:next
-- KEYS[4]  request  hf:{mx:<ns>:<name>}:rq:<id>
-- KEYS[5]  ended    hf:{mx:<ns>:<name>}:ended   set of watched fences released on purpose, kept ENDED_KEEP_MS
-- KEYS[6]  delay    hf:{mx:<ns>:<name>}:delay   the lease's lock-delay: a release has none, so it goes
-- KEYS[7]  watchers hf:{mx:<ns>:<name>}:watchers   passed only by the Worker: exists while the lock
--                                                 object has watch sockets (lua/FIELDS.md)
-- ARGV[1]  token ('' with force)
-- ARGV[2]  'force': an operator's force release: whoever holds it, every re-entered level at once
-- ARGV[3]  with force: the fence the operator saw ('' for any); another lease's is left alone
--
-- replies: JSON text on every path, so the body runs at the script's top level (tools/gen-lua-scripts.mjs)
-- Returns name/value pairs:
--   status ok, released "1"|"0", count, fence, watched "1"|"0", and quorumFence on a
--     quorum's database (see raise_fence.lua)
--     and when handed over: handedTo (token), handedFence, handedTtlMs, handedExpiresAt
--   with force also holder (the freed lease's label, JSON) when it had one
--   and watchers "1" when KEYS[7] was passed and exists (the Worker then tells the lock object)
--   status lost (with force: nobody holds it, or not the lease of that fence)
--
-- Handing over inside the release costs the next waiter no round trip of its
-- own. Safe to run twice: every ok answer is remembered under the request id.
-- A retried final release finds the lease gone and replays it; a retried
-- inner release (which would otherwise drop two levels) finds its id on the
-- lease (field rl) and replays it. Lost is not remembered. The usual release
-- (one level, unwatched) is HLEN, HMGET, DEL, SET, its answer written as JSON text:
-- the waiter is read only behind a watched lease, the clock only for a
-- handoff. A lease with fields beyond the four of every grant pays one HLEN
-- more.

local force = ARGV[2] == 'force'
local token = ARGV[1]
if force then
  if ARGV[3] ~= '' and not string.match(ARGV[3], '^%d+$') then bad_arg('fence', 'must be a fence or empty') end
  token = ''
elseif not token or #token < 1 or #token > 256 then
  bad_arg('token', 'must be 1 to 256 bytes')
end

-- Every lease has the four fields a grant writes (owner, fence, ttl, exp),
-- and the usual one nothing else: then it has no count, watch, quorum fence,
-- inner release or lock-delay to read, and one HLEN spares reading five
-- absent fields (in Redis's Lua each field read costs about as much as a small
-- command).
local lock
if not force and redis.call('HLEN', KEYS[1]) == 4 then
  lock = redis.call('HMGET', KEYS[1], 'owner', 'fence')
else
  lock = redis.call('HMGET', KEYS[1], 'owner', 'fence', 'watch', 'qf', 'count', 'rl', 'ld')
end
local label = false
if force then
  -- Its retry must not free the next holder: a remembered answer comes first.
  local seen = redis.call('GET', KEYS[4])
  if seen then return seen end
  if not lock[1] or (ARGV[3] ~= '' and ARGV[3] ~= lock[2]) then return '["status","lost"]' end
  token = lock[1]
  lock[5] = '1'
  label = redis.call('HGET', KEYS[1], 'holder')
end
if lock[1] ~= token or lock[6] == KEYS[4] then
  -- Not (or no longer) this token's, or this very request already ran: its
  -- remembered answer if it did, else lost.
  local seen = redis.call('GET', KEYS[4])
  if seen then return seen end
  return '["status","lost"]'
end
local watched = lock[3] or '0'
-- The fence the lease's watch knows it by: a quorum's agreed one where there is one.
local lease_fence = lock[4] or lock[2]

-- The ok answer as JSON text (every value is digits we stored), with the
-- quorum's agreed fence, remembered for a retry. handed: the handoff's fields.
local function answer(released, count, handed)
  local tail = handed or ''
  if label then tail = tail .. ',"holder",' .. cjson.encode(label) end
  if lock[4] then tail = tail .. ',"quorumFence","' .. lock[4] .. '"' end
  if KEYS[7] and redis.call('EXISTS', KEYS[7]) == 1 then tail = tail .. ',"watchers","1"' end
  return remember(KEYS[4], '["status","ok","released","' .. released .. '","count","' .. count .. '","fence","' .. lock[2]
    .. '","watched","' .. watched .. '"' .. tail .. ']')
end

-- count is absent or "1" on every fresh grant; only a re-entered lease pays for a conversion.
if lock[5] and lock[5] ~= '1' and tonumber(lock[5]) > 1 then
  local count = fmt(tonumber(lock[5]) - 1)
  redis.call('HSET', KEYS[1], 'count', count, 'rl', KEYS[4])
  return answer('0', count)
end

-- A registered waiter exists only behind a watched lease: registering (acquire.lua,
-- queue mode) marks the lease it waits behind, and no grant to another token
-- leaves a registration in place. So an unwatched lease has nobody to hand to.
local nx = watched == '1' and redis.call('HMGET', KEYS[3], 'token', 'ttl', 'watch', 'more', 'holder', 'ld') or {}
local handing = nx[1] and nx[1] ~= ''
if not handing then
  redis.call('DEL', KEYS[1])
  if lock[7] then redis.call('DEL', KEYS[6]) end
  if watched == '1' then
    redis.call('SADD', KEYS[5], lease_fence)
    redis.call('PEXPIRE', KEYS[5], ENDED_KEEP_MS_ARG)
  end
  return answer('1', '0')
end

-- prelude below: the prelude functions only the handoff uses (tools/gen-lua-scripts.mjs)

-- The handoff: the clock first, before any write (its check comes first).
local now_ms, now_us = redis_now()
local floor = fence_floor(now_us)
redis.call('DEL', KEYS[1])
if lock[7] then redis.call('DEL', KEYS[6]) end
redis.call('SADD', KEYS[5], lease_fence)
redis.call('PEXPIRE', KEYS[5], ENDED_KEEP_MS_ARG)
local ttl = tonumber(nx[2])
local fence = issue_fence(KEYS[2], floor)
local exp = fmt(now_ms + ttl)
redis.call('HSET', KEYS[1], 'owner', nx[1], 'fence', fence, 'ttl', nx[2], 'exp', exp, 'watch', nx[3] or '0',
  'pk', fmt(now_ms + PICKUP_MS))
if nx[5] and nx[5] ~= '' then redis.call('HSET', KEYS[1], 'holder', nx[5]) end
if nx[6] and nx[6] ~= '0' then set_lock_delay(KEYS[1], KEYS[6], tonumber(nx[6]), now_ms + ttl) end
redis.call('PEXPIREAT', KEYS[1], exp)
redis.call('DEL', KEYS[3])
if nx[4] == '1' then
  -- Others wait behind the new holder: hold try-locks back until the object
  -- registers its next head, which it does right after this handoff. Short-
  -- lived, so it cannot outlive the line it stands for.
  redis.call('HSET', KEYS[3], 'token', '', 'more', '1')
  redis.call('PEXPIREAT', KEYS[3], fmt(now_ms + REGISTRATION_GRACE_MS))
end
-- The waiter's token is any text the caller chose: JSON-encoded, not spliced.
return answer('1', '0', ',"handedTo",' .. cjson.encode(nx[1]) .. ',"handedFence","' .. fence .. '","handedTtlMs","' .. nx[2]
  .. '","handedExpiresAt","' .. exp .. '"')

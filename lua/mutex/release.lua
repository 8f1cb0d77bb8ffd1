-- mutex release: drop one level of the holder's re-entrant hold; at depth 0
-- hand the lock to the lock object's registered waiter, or free it.
-- Compare-and-delete: never touches another holder's lease.
--
-- KEYS[1]  lock     hf:{mx:<ns>:<name>}      the mutex's hash (acquire.lua, lua/FIELDS.md); its field rl:
--                                             KEYS[2] of the last inner release
-- KEYS[2]  request  hf:{mx:<ns>:<name>}:rq:<id>
-- KEYS[3]  ended    hf:{mx:<ns>:<name>}:ended   set of watched fences released on purpose, kept ENDED_KEEP_MS
-- KEYS[4]  fence    hf:{mx:<ns>:<name>}:fence      0.1's last fence: a handoff's fence above Redis's clock is
--                                                 written there too (keep_legacy_fence in lua/prelude.lua)
-- KEYS[5]  watchers hf:{mx:<ns>:<name>}:watchers   passed only by the Worker: exists while the lock
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
--   and watchers "1" when KEYS[5] was passed and exists (the Worker then tells the lock object)
--   status lost (the lease lapsed, or is another's; with force: nobody holds it, or not the
--     lease of that fence)
--
-- Handing over inside the release costs the next waiter no round trip of its
-- own. Safe to run twice: every ok answer is remembered under the request id.
-- A retried final release finds the owner gone and replays it; a retried
-- inner release (which would otherwise drop two levels) finds its id on the
-- lease (field rl) and replays it. Lost is not remembered. Freeing the lock
-- keeps the hash, with its last fence, and marks it released: owner "" and
-- exp "0" (a 0.1 process reads that as held by another, busy, and writes
-- nothing: it never grants a lock 0.2 keeps, so never a fence below 0.2's).
-- The usual release (one level, unwatched: the lease has only the four
-- fields of every grant) is TIME, HLEN, HMGET, HSET, SET, its answer written
-- as JSON text. The waiter is read only behind a watched lease.

local force = ARGV[2] == 'force'
local token = ARGV[1]
if force then
  if ARGV[3] ~= '' and not string.match(ARGV[3], '^%d+$') then bad_arg('fence', 'must be a fence or empty') end
  token = ''
elseif not token or #token < 1 or #token > 256 then
  bad_arg('token', 'must be 1 to 256 bytes')
end

local now_ms_text = redis_now_ms_text()

-- Every lease has the four fields a grant writes (owner, fence, ttl, exp),
-- and the usual one nothing else: then it has no count, watch, quorum fence,
-- inner release, lock-delay or waiter to read, and one HLEN spares reading
-- absent fields (in Redis's Lua each field read costs about as much as a
-- small command).
local usual = not force and redis.call('HLEN', KEYS[1]) == 4
local lock
if usual then
  lock = redis.call('HMGET', KEYS[1], 'owner', 'fence', 'exp')
else
  lock = redis.call('HMGET', KEYS[1], 'owner', 'fence', 'exp', 'watch', 'qf', 'count', 'rl', 'ff')
end
-- A lapsed lease keeps its owner until the next grant: it is nobody's to release.
local live = lock[1] and lease_live(lock[3], now_ms_text)
local label = false
if force then
  -- Its retry must not free the next holder: a remembered answer comes first.
  local seen = redis.call('GET', KEYS[2])
  if seen then return seen end
  if not live or (ARGV[3] ~= '' and ARGV[3] ~= lock[2]) then return '["status","lost"]' end
  token = lock[1]
  lock[6] = '1'
  label = redis.call('HGET', KEYS[1], 'holder')
end
-- A lease that took inner releases (rl set) replays any of them retried (its answer is remembered under
-- its request id), not only the last: a late copy of an earlier one must not drop another level.
local replay = lock[7] and redis.call('GET', KEYS[2])
if replay then return replay end
if lock[1] ~= token or not live or lock[7] == KEYS[2] then
  -- Not (or no longer) this token's, or this very request already ran: its
  -- remembered answer if it did, else lost.
  local seen = redis.call('GET', KEYS[2])
  if seen then return seen end
  return '["status","lost"]'
end

if usual then
  redis.call('HSET', KEYS[1], 'owner', '', 'exp', '0')
  local tail = ']'
  if KEYS[5] and redis.call('EXISTS', KEYS[5]) == 1 then tail = ',"watchers","1"]' end
  return remember(KEYS[2], '["status","ok","released","1","count","0","fence","' .. lock[2] .. '","watched","0"' .. tail)
end

-- prelude below: the prelude functions only the rest uses (tools/gen-lua-scripts.mjs)

local watched = lock[4] or '0'
-- The fence the lease's watch knows it by: a quorum's agreed one where there is one.
local lease_fence = lock[5] or lock[2]

-- The ok answer as JSON text (every value is digits we stored), with the
-- quorum's agreed fence, remembered for a retry. handed: the handoff's fields.
local function answer(released, count, handed)
  local tail = handed or ''
  if label then tail = tail .. ',"holder",' .. cjson.encode(label) end
  if lock[5] then tail = tail .. ',"quorumFence","' .. lock[5] .. '"' end
  if KEYS[5] and redis.call('EXISTS', KEYS[5]) == 1 then tail = tail .. ',"watchers","1"' end
  return remember(KEYS[2], '["status","ok","released","' .. released .. '","count","' .. count .. '","fence","' .. lock[2]
    .. '","watched","' .. watched .. '"' .. tail .. ']')
end

-- count is absent or "1" on every fresh grant; only a re-entered lease pays for a conversion.
if lock[6] and lock[6] ~= '1' and tonumber(lock[6]) > 1 then
  local count = fmt(tonumber(lock[6]) - 1)
  redis.call('HSET', KEYS[1], 'count', count, 'rl', KEYS[2])
  return answer('0', count)
end

-- A registered waiter exists only behind a watched lease: registering (acquire.lua,
-- queue mode) marks the lease it waits behind, and no grant to another token
-- leaves a registration in place. So an unwatched lease has nobody to hand to.
local nx = watched == '1' and redis.call('HMGET', KEYS[1], 'nt', 'nl', 'nw', 'nm', 'nh', 'nd', 'nu', 'lp') or {}
local handing = nx[1] and nx[1] ~= '' and lease_live(nx[7], now_ms_text)
-- The last fence, with a quorum's where it is higher, kept in fence for the next grant; a
-- handoff's new fence comes from it, before any write (its checks come first).
local last = mutex_last_fence(lock[2], lock[5], lock[8])
local now_ms, now_us = nil, nil
if handing then now_ms, now_us = redis_now() end
local fence = handing and next_fence(last, fence_floor(now_us))
if watched == '1' then
  redis.call('SADD', KEYS[3], lease_fence)
  redis.call('PEXPIRE', KEYS[3], ENDED_KEEP_MS_ARG)
end
if not handing then
  -- The lease's fields go (its lock-delay with them: only a lapse is delayed); a registration stays.
  redis.call('HDEL', KEYS[1], 'count', 'lt', 'watch', 'pk', 'holder', 'ld', 'qf', 'rl', 'ff')
  redis.call('HSET', KEYS[1], 'owner', '', 'exp', '0', 'fence', last)
  return answer('1', '0')
end

-- The handoff.
local exp = fmt(now_ms + tonumber(nx[2]))
redis.call('HDEL', KEYS[1], 'count', 'lt', 'watch', 'holder', 'ld', 'qf', 'rl', 'ff', 'nt', 'nl', 'nw', 'nm', 'nh', 'nd', 'nu')
redis.call('HSET', KEYS[1], 'owner', nx[1], 'fence', fence, 'ttl', nx[2], 'exp', exp, 'pk', fmt(now_ms + PICKUP_MS))
keep_legacy_fence(KEYS[4], fence, now_us)
if nx[3] == '1' then redis.call('HSET', KEYS[1], 'watch', '1') end
if nx[5] and nx[5] ~= '' then redis.call('HSET', KEYS[1], 'holder', nx[5]) end
if nx[6] and nx[6] ~= '0' then redis.call('HSET', KEYS[1], 'ld', nx[6]) end
-- A hash that keeps a history (an election's: field lp) gets the new leader appended to it.
if nx[8] then history_add(KEYS[1], fence, nx[5], now_ms) end
if nx[4] == '1' then
  -- Others wait behind the new holder: hold try-locks back until the object
  -- registers its next head, which it does right after this handoff. Short-
  -- lived, so it cannot outlive the line it stands for.
  redis.call('HSET', KEYS[1], 'nt', '', 'nm', '1', 'nu', fmt(now_ms + REGISTRATION_GRACE_MS))
end
redis.call('PEXPIRE', KEYS[1], MUTEX_KEEP_MS_ARG)
-- The waiter's token is any text the caller chose: JSON-encoded, not spliced.
return answer('1', '0', ',"handedTo",' .. cjson.encode(nx[1]) .. ',"handedFence","' .. fence .. '","handedTtlMs","' .. nx[2]
  .. '","handedExpiresAt","' .. exp .. '"')

-- mutex release_unwatched: release.lua for a lease that nobody watches (the
-- library's usual lease), without the ended, fence and watchers keys. A final
-- release of a watched lease it leaves alone: it answers defer, and the
-- caller runs release.lua.
--
-- KEYS[1]  lock     hf:{mx:<ns>:<name>}           the mutex's hash; its field rl: KEYS[2] of the last inner release
-- KEYS[2]  request  hf:{mx:<ns>:<name>}:rq:<id>   the same request key as release.lua's KEYS[2]
-- ARGV[1]  token
--
-- replies: JSON text on every path, so the body runs at the script's top level (tools/gen-lua-scripts.mjs)
-- Returns name/value pairs as release.lua does without force (never a handoff):
--   status ok, released "1"|"0", count, fence, watched "1"|"0", and quorumFence on a
--     quorum's database
--   status lost
--   status defer   a final release of a watched lease (onExpire, or a waiter registered
--                  behind it): nothing written; run release.lua, which hands it over or
--                  notes it in the ended set
--
-- Why two scripts: release.lua also passes the ended key and 0.1's fence key,
-- which only a watched lease and a handoff use; each key costs Redis about as
-- much as a small command. The caller that expects
-- no watch (the library, where no lock object waits) runs this first.
-- Safe to run twice, and interchangeable with release.lua for a retry: both
-- remember an ok answer under the same request key and mark an inner release
-- on the lease (rl) the same way (while it is set, any retried inner release
-- replays), and mark a freed lock alike (owner "", exp "0"). The usual release is TIME, HLEN, HMGET, HSET, SET.

-- The usual path calls no function: in Redis's Lua each local function is a
-- closure made anew on every call of the script, which costs about as much as
-- a small command; the prelude's (bad_arg, remember) are made below the mark.
local token = ARGV[1]
if not token or #token < 1 or #token > 256 then error({err = 'ERR holdfast: token must be 1 to 256 bytes'}) end

-- Redis's clock in ms as digits: a lease's end (exp) is compared as text
-- (digit texts of one length compare as their numbers do), so the usual
-- release converts no number.
local t = redis.call('TIME')
local now_ms_text = t[1] .. string.sub('000000' .. t[2], -6, -4)

-- As in release.lua: a lease with only the four fields of every grant has nothing more to read.
local usual = redis.call('HLEN', KEYS[1]) == 4
local lock
if usual then
  lock = redis.call('HMGET', KEYS[1], 'owner', 'fence', 'exp')
else
  lock = redis.call('HMGET', KEYS[1], 'owner', 'fence', 'exp', 'watch', 'qf', 'count', 'rl', 'ff')
end
-- A lapsed lease keeps its owner until the next grant: it is nobody's to release.
local exp = lock[3]
local live = lock[1] == token and ((#exp == #now_ms_text and exp > now_ms_text) or (#exp ~= #now_ms_text and tonumber(exp) > tonumber(now_ms_text)))
-- A lease that took inner releases (rl set) replays any of them retried (its answer is remembered under
-- its request id), not only the last: a late copy of an earlier one must not drop another level.
local replay = lock[7] and redis.call('GET', KEYS[2])
if replay then return replay end
if not live or lock[7] == KEYS[2] then
  -- Not (or no longer) this token's, or this very request already ran: its
  -- remembered answer if it did, else lost.
  local seen = redis.call('GET', KEYS[2])
  if seen then return seen end
  return '["status","lost"]'
end

if usual then
  -- Released (owner "", exp "0": release.lua says why); the answer is remembered for a retry.
  redis.call('HSET', KEYS[1], 'owner', '', 'exp', '0')
  local reply = '["status","ok","released","1","count","0","fence","' .. lock[2] .. '","watched","0"]'
  redis.call('PSETEX', KEYS[2], REQUEST_MEMORY_MS_ARG, reply)
  return reply
end

-- prelude below: the prelude functions only the rest uses (tools/gen-lua-scripts.mjs)

local watched = lock[4] or '0'
local tail = ']'
if lock[5] then tail = ',"quorumFence","' .. lock[5] .. '"]' end

-- An inner release (count is absent or "1" on every fresh grant) needs no other key, watched or not.
if lock[6] and lock[6] ~= '1' and tonumber(lock[6]) > 1 then
  local count = fmt(tonumber(lock[6]) - 1)
  redis.call('HSET', KEYS[1], 'count', count, 'rl', KEYS[2])
  return remember(KEYS[2], '["status","ok","released","0","count","' .. count .. '","fence","' .. lock[2]
    .. '","watched","' .. watched .. '"' .. tail)
end

if watched == '1' then return '["status","defer"]' end

-- The lease's fields go (its lock-delay with them: only a lapse is delayed); the last fence, with a
-- quorum's where it is higher, stays in fence for the next grant.
local last = mutex_last_fence(lock[2], lock[5], lock[8])
redis.call('HDEL', KEYS[1], 'count', 'lt', 'watch', 'pk', 'holder', 'ld', 'qf', 'rl', 'ff')
redis.call('HSET', KEYS[1], 'owner', '', 'exp', '0', 'fence', last)
return remember(KEYS[2], '["status","ok","released","1","count","0","fence","' .. lock[2] .. '","watched","0"' .. tail)

-- mutex release_unwatched: release.lua for a lease that nobody watches and
-- that has no lock-delay (the library's usual lease), with two keys instead
-- of six. A final release of any other lease it leaves alone: it answers
-- defer, and the caller runs release.lua.
--
-- KEYS[1]  lock     hf:{mx:<ns>:<name>}           its field rl: KEYS[2] of the last inner release
-- KEYS[2]  request  hf:{mx:<ns>:<name>}:rq:<id>   the same request key as release.lua's KEYS[4]
-- ARGV[1]  token
--
-- replies: JSON text on every path, so the body runs at the script's top level (tools/gen-lua-scripts.mjs)
-- Returns name/value pairs as release.lua does without force (never a handoff):
--   status ok, released "1"|"0", count, fence, watched "1"|"0", and quorumFence on a
--     quorum's database
--   status lost
--   status defer   a final release of a watched lease (onExpire, or a waiter registered
--                  behind it) or of one with a lock-delay: nothing written; run release.lua,
--                  which hands it over, notes it in the ended set, or deletes the delay key
--
-- Why two scripts: release.lua also passes the fence, next, ended and delay
-- keys, which only a handoff, a watched lease and a lock-delay use, and each
-- key costs Redis about as much as a small command. The caller that expects
-- none of them (the library, where no lock object waits) runs this first.
-- Safe to run twice, and interchangeable with release.lua for a retry: both
-- remember an ok answer under the same request key and mark an inner release
-- on the lease (rl) the same way. The usual release is HLEN, HMGET, DEL, SET.

local token = ARGV[1]
if not token or #token < 1 or #token > 256 then bad_arg('token', 'must be 1 to 256 bytes') end

-- As in release.lua: a lease with only the four fields of every grant has nothing more to read.
local lock
if redis.call('HLEN', KEYS[1]) == 4 then
  lock = redis.call('HMGET', KEYS[1], 'owner', 'fence')
else
  lock = redis.call('HMGET', KEYS[1], 'owner', 'fence', 'watch', 'qf', 'count', 'rl', 'ld')
end
if lock[1] ~= token or lock[6] == KEYS[2] then
  -- Not (or no longer) this token's, or this very request already ran: its
  -- remembered answer if it did, else lost.
  local seen = redis.call('GET', KEYS[2])
  if seen then return seen end
  return '["status","lost"]'
end

local watched = lock[3] or '0'
local tail = ']'
if lock[4] then tail = ',"quorumFence","' .. lock[4] .. '"]' end

-- An inner release (count is absent or "1" on every fresh grant) needs no other key, watched or not.
if lock[5] and lock[5] ~= '1' and tonumber(lock[5]) > 1 then
  local count = fmt(tonumber(lock[5]) - 1)
  redis.call('HSET', KEYS[1], 'count', count, 'rl', KEYS[2])
  return remember(KEYS[2], '["status","ok","released","0","count","' .. count .. '","fence","' .. lock[2]
    .. '","watched","' .. watched .. '"' .. tail)
end

if watched == '1' or lock[7] then return '["status","defer"]' end

redis.call('DEL', KEYS[1])
return remember(KEYS[2], '["status","ok","released","1","count","0","fence","' .. lock[2] .. '","watched","0"' .. tail)

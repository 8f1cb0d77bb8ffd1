-- mutex heartbeat: extend the lease of the token that holds the mutex.
--
-- KEYS[1]  lock  hf:{mx:<ns>:<name>}           the mutex's hash (acquire.lua, lua/FIELDS.md); a lapse's
--                                               lock-delay follows the lease's end (exp + ld)
-- KEYS[2]  watchers hf:{mx:<ns>:<name>}:watchers   passed only by the Worker: exists while the lock
--                                                 object has watch sockets (lua/FIELDS.md)
-- ARGV[1]  token
-- ARGV[2]  ttlMs (1 .. 86400000), or "" for the ttl of the last acquire
--
-- replies: JSON text on every path, so the body runs at the script's top level (tools/gen-lua-scripts.mjs)
-- Returns name/value pairs: status ok, expiresAt, ttlMs, fence (and quorumFence
-- on a quorum's database, see raise_fence.lua; and watchers "1" when KEYS[2] was
-- passed and exists); or status lost.
--
-- A heartbeat is the holder's sign of life: it also marks a handed-over grant
-- as picked up (pk), so the lock object will not take it back. It does not
-- touch the lock object's registered waiter: the object renews that when it
-- wakes at the old end of the lease, and a registration whose object lost its
-- line (a restart) must lapse, or the release would hand the lock to a waiter
-- that is gone, for that waiter's whole ttl.
-- Safe to run twice: a repeat only sets the same end again from Redis's now.
-- A lapsed lease (its owner kept until the next grant) is lost, as a released one.
-- The usual heartbeat is TIME, HMGET, HSET, PEXPIRE: pk is deleted only where
-- the read found it, the new end is formatted once, and the ttl is kept and
-- answered as sent (the library and the Worker send decimal digits).

local token = ARGV[1]
if not token or #token < 1 or #token > 256 then bad_arg('token', 'must be 1 to 256 bytes') end
local ttl_text = ARGV[2]
local ttl = nil
if ttl_text ~= '' then
  ttl = tonumber(ttl_text)
  if not ttl or ttl % 1 ~= 0 or ttl < 1 or ttl > 86400000 then
    bad_arg('ttlMs', 'must be an integer from 1 to 86400000, got ' .. tostring(ttl_text))
  end
end

local now_ms = redis_now()

local lock = redis.call('HMGET', KEYS[1], 'owner', 'ttl', 'fence', 'qf', 'exp', 'pk')
if lock[1] ~= token or tonumber(lock[5]) <= now_ms then return '["status","lost"]' end

if not ttl then ttl, ttl_text = tonumber(lock[2]), lock[2] end
local exp_ms = now_ms + ttl
local exp = fmt(exp_ms)
-- lt: the lease's length as of this write (lease_end in lua/prelude.lua).
redis.call('HSET', KEYS[1], 'exp', exp, 'lt', ttl_text)
if lock[6] then redis.call('HDEL', KEYS[1], 'pk') end
-- The hash outlives the new end by the fence's keep time (MUTEX_KEEP_MS).
redis.call('PEXPIRE', KEYS[1], MUTEX_KEEP_MS_ARG)
local tail = ']'
if lock[4] then tail = ',"quorumFence","' .. lock[4] .. '"]' end
if KEYS[2] and redis.call('EXISTS', KEYS[2]) == 1 then tail = ',"watchers","1"' .. tail end
return '["status","ok","expiresAt","' .. exp .. '","ttlMs","' .. ttl_text .. '","fence","' .. lock[3] .. '"' .. tail

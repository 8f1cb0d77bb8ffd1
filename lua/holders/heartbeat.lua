-- holders heartbeat: extend one holder's lease (read-write lock, semaphore).
--
-- KEYS[1]  lock  hf:{<rw|sem>:<ns>:<name>}        hash of holders (see holders.lua)
-- KEYS[2]  watchers hf:{<rw|sem>:<ns>:<name>}:watchers  passed only by the Worker: exists while the lock
--                                                 object has watch sockets (lua/FIELDS.md)
-- ARGV[1]  token
-- ARGV[2]  ttlMs (1 .. 86400000), or "" for the ttl of the holder's last acquire
--
-- Returns name/value pairs: status ok, expiresAt, ttlMs, fence (and watchers "1" when KEYS[2]
-- was passed and exists); or status lost.
--
-- The holder's sign of life: it also marks a grant from the line picked up
-- (pk), so the lock object will not take it back. It leaves the gate alone:
-- the lock object wakes at the earliest lease end and its queue step sets the
-- gate again, so a gate whose line the object lost (a restart) ends a grace
-- after the leases it was set behind, however long the holders heartbeat.
-- Safe to run twice: a repeat sets the same lease again from Redis's now.
-- uses: holders

local token = arg_str(1, 'token', 256)
local ttl_arg = nil
if ARGV[2] ~= '' then ttl_arg = arg_int(2, 'ttlMs', 1, 86400000) end

local now_ms = redis_now()
local live, _, dead = holders_load(KEYS[1], now_ms, true)
local mine = live[token]
if not mine then return {'status', 'lost'} end

local ttl = ttl_arg or tonumber(mine.ttl)
mine.exp = fmt(now_ms + ttl)
mine.lt = fmt(ttl)
mine.pk = nil
holders_put(KEYS[1], token, mine)
holders_settle(KEYS[1], live, dead)
local r = {'status', 'ok', 'expiresAt', mine.exp, 'ttlMs', fmt(ttl), 'fence', mine.f}
if KEYS[2] and redis.call('EXISTS', KEYS[2]) == 1 then
  r[#r + 1] = 'watchers'
  r[#r + 1] = '1'
end
return r

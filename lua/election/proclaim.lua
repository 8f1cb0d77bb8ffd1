-- election proclaim: the leader changes its value, keeping its term and its lease's end.
--
-- KEYS[1]  lock      hf:{el:<ns>:<name>}            the election's hash: the mutex's fields
--                                                    (lua/mutex/acquire.lua, lua/FIELDS.md), the
--                                                    value kept as the lease's label (holder)
-- KEYS[2]  watchers  hf:{el:<ns>:<name>}:watchers   passed only by the Worker: exists while the lock
--                                                    object has watch sockets (lua/FIELDS.md)
-- ARGV[1]  token: the leader's
-- ARGV[2]  value: 1 .. 4096 bytes
--
-- Returns name/value pairs: status ok, fence (the term), expiresAt, position (the
-- history's last: a new value is appended to it, see history_add) (and watchers
-- "1" when KEYS[2] was passed and exists); or status lost (the token does not
-- lead: never did, resigned, or its lease lapsed).
--
-- Safe to run twice: a repeat finds the same value and appends nothing. Nothing else moves:
-- a proclaim is no sign of life (a heartbeat is), so a leader that only
-- proclaims still lapses at its lease's end.

local token = arg_str(1, 'token', 256)
local value = arg_str(2, 'value', 4096)

local now_ms = redis_now()
local lock = redis.call('HMGET', KEYS[1], 'owner', 'fence', 'exp', 'ttl', 'lt', 'holder', 'lp')
if lock[1] ~= token then return {'status', 'lost'} end
-- A lapsed lease keeps its owner until the next grant: it leads only while its end (lease_end) is ahead.
local exp = lease_end(tonumber(lock[3]), tonumber(lock[5] or lock[4]), now_ms)
if exp <= now_ms then return {'status', 'lost'} end

local position = lock[7] or '0'
if value ~= lock[6] then
  redis.call('HSET', KEYS[1], 'holder', value)
  position = fmt(history_add(KEYS[1], lock[2], value, now_ms))
end
local r = {'status', 'ok', 'fence', lock[2], 'expiresAt', fmt(exp), 'position', position}
if KEYS[2] and redis.call('EXISTS', KEYS[2]) == 1 then
  r[#r + 1] = 'watchers'
  r[#r + 1] = '1'
end
return r

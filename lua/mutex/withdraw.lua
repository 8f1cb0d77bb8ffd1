-- mutex withdraw: the lock object takes a waiter out of line, e.g. one whose
-- client gave up or never picked up the lock it was handed.
--
-- KEYS[1]  lock  hf:{mx:<ns>:<name>}   the mutex's hash (acquire.lua, lua/FIELDS.md): its registered
--                                      waiter (nt ...) and its lease
-- ARGV[1]  the waiter's token
-- ARGV[2]  reason: left (it left the line before any grant reached it: nobody
--          has its token, so the lock is taken back from it whatever its pk
--          mark) | unclaimed (its grant was answered but not picked up in
--          time: taken back only while still marked pk)
--
-- Returns name/value pairs: status unregistered (it was the registered head),
-- revoked + fence (the lock was taken back from it: free again, with no
-- lock-delay), or none (nothing of it was left, e.g. it picked the lock up,
-- or its lease lapsed).
--
-- An answered grant is only taken back while it is still marked not picked
-- up (pk): a heartbeat, re-entry or release by the holder clears or ends it
-- first. Safe to run twice: a repeat finds nothing and answers none.

local token = arg_str(1, 'token', 256)
local reason = arg_one_of(2, 'reason', {'left', 'unclaimed'})
local now_ms_text = redis_now_ms_text()

local lock = redis.call('HMGET', KEYS[1], 'nt', 'owner', 'pk', 'fence', 'qf', 'exp', 'ff')
if lock[1] == token then
  redis.call('HDEL', KEYS[1], 'nt', 'nl', 'nw', 'nm', 'nh', 'nd', 'nu')
  return {'status', 'unregistered'}
end
if lock[2] == token and (reason == 'left' or lock[3]) and lease_live(lock[6], now_ms_text) then
  -- The lease's fields go, its lock-delay with them (no lapse); the last fence stays, with a quorum's.
  local last = mutex_last_fence(lock[4], lock[5], lock[7])
  redis.call('HDEL', KEYS[1], 'count', 'lt', 'watch', 'pk', 'holder', 'ld', 'qf', 'rl', 'ff')
  -- Released as release.lua marks it (owner "", exp "0").
  redis.call('HSET', KEYS[1], 'owner', '', 'exp', '0', 'fence', last)
  return {'status', 'revoked', 'fence', lock[5] or lock[4]}
end
return {'status', 'none'}

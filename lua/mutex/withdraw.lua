-- mutex withdraw: the lock object takes a waiter out of line, e.g. one whose
-- client gave up or never picked up the lock it was handed.
--
-- KEYS[1]  lock  hf:{mx:<ns>:<name>}
-- KEYS[2]  next  hf:{mx:<ns>:<name>}:next
-- KEYS[3]  delay hf:{mx:<ns>:<name>}:delay   a taken-back grant's lock-delay goes with it (no lapse)
-- ARGV[1]  the waiter's token
-- ARGV[2]  reason: left (it left the line before any grant reached it: nobody
--          has its token, so the lock is taken back from it whatever its pk
--          mark) | unclaimed (its grant was answered but not picked up in
--          time: taken back only while still marked pk)
--
-- Returns name/value pairs: status unregistered (it was the registered head),
-- revoked + fence (the lock was taken back from it: free again), or none
-- (nothing of it was left, e.g. it picked the lock up).
--
-- An answered grant is only taken back while it is still marked not picked
-- up (pk): a heartbeat, re-entry or release by the holder clears or ends it
-- first. Safe to run twice: a repeat finds nothing and answers none.

local token = arg_str(1, 'token', 256)
local reason = arg_one_of(2, 'reason', {'left', 'unclaimed'})

if redis.call('HGET', KEYS[2], 'token') == token then
  redis.call('DEL', KEYS[2])
  return {'status', 'unregistered'}
end
local lock = redis.call('HMGET', KEYS[1], 'owner', 'pk', 'fence', 'qf')
if lock[1] == token and (reason == 'left' or lock[2]) then
  redis.call('DEL', KEYS[1], KEYS[3])
  return {'status', 'revoked', 'fence', lock[4] or lock[3]}
end
return {'status', 'none'}

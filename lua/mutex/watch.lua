-- mutex watch: how a watched lease (onExpire) stands. Read-only.
--
-- flags: no-writes (Redis refuses any write; Upstash takes shared read locks)
--
-- KEYS[1]  lock   hf:{mx:<ns>:<name>}          the mutex's hash (acquire.lua, lua/FIELDS.md)
-- KEYS[2]  ended  hf:{mx:<ns>:<name>}:ended   fences of watched leases released on purpose
-- ARGV[1]  the lease's fence (on a quorum's database, the agreed one: qf)
--
-- Returns name/value pairs: state held, remainingMs, expiresAt; or state
-- ended (released on purpose: no notification); or state lapsed.

local fence = arg_str(1, 'fence', 32)
local now_ms = redis_now()
local lock = redis.call('HMGET', KEYS[1], 'owner', 'fence', 'exp', 'qf', 'ttl', 'lt')
-- The hash keeps its fence after the lease: the lease is this one while it has an owner and has not lapsed.
if lock[1] and (lock[4] or lock[2]) == fence then
  local exp = lease_end(tonumber(lock[3]), tonumber(lock[6] or lock[5]), now_ms)
  if exp > now_ms then return {'state', 'held', 'remainingMs', fmt(exp - now_ms), 'expiresAt', fmt(exp)} end
end
if redis.call('SISMEMBER', KEYS[2], fence) == 1 then return {'state', 'ended'} end
return {'state', 'lapsed'}

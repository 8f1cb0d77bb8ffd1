-- mutex watch: how a watched lease (onExpire) stands. Read-only.
--
-- flags: no-writes (Redis refuses any write; Upstash takes shared read locks)
--
-- KEYS[1]  lock   hf:{mx:<ns>:<name>}
-- KEYS[2]  ended  hf:{mx:<ns>:<name>}:ended   fences of watched leases released on purpose
-- ARGV[1]  the lease's fence (on a quorum's database, the agreed one: qf)
--
-- Returns name/value pairs: state held, remainingMs, expiresAt; or state
-- ended (released on purpose: no notification); or state lapsed.

local fence = arg_str(1, 'fence', 32)
local now_ms = redis_now()
local lock = redis.call('HMGET', KEYS[1], 'fence', 'exp', 'qf', 'ttl', 'lt')
if (lock[3] or lock[1]) == fence then
  local exp = lease_end(tonumber(lock[2]), tonumber(lock[5] or lock[4]), now_ms)
  return {'state', 'held', 'remainingMs', fmt(math.max(exp - now_ms, 0)), 'expiresAt', fmt(exp)}
end
if redis.call('SISMEMBER', KEYS[2], fence) == 1 then return {'state', 'ended'} end
return {'state', 'lapsed'}

-- mutex raise_fence: a quorum's second step after a grant. Each node of a
-- quorum issued its own fence; the grant's fence is the largest of the
-- majority's (or the one a first try already agreed), and this makes it the
-- node's floor too, so that any later majority (which shares a node with this
-- one) issues a larger fence. It also records it as the lease's agreed fence
-- (qf), which the node's later answers carry, so the quorum can tell the
-- lease's fence from one this node issued on its own for a grant that came
-- too late to be counted.
--
-- KEYS[1]  lock   hf:{mx:<ns>:<name>}         the mutex's hash (acquire.lua, lua/FIELDS.md)
-- KEYS[2]  fence  hf:{mx:<ns>:<name>}:fence   0.1's last fence, read where the hash keeps none; raised too
-- ARGV[1]  token: the grant's owner token
-- ARGV[2]  fence: the quorum grant's fence
--
-- Returns name/value pairs:
--   status ok, held "1", remainingMs (of this node's lease, by its own clock)
--     when the token holds this node's lock (its qf now says at least ARGV[2])
--   status ok, held "0" otherwise
--
-- The remaining time is what makes a quorum grant's expiry true when a node
-- answered with an older grant (a retry's replay): the quorum's lease ends
-- with the majority's soonest.
-- Where the token holds the lease, the floor is its qf; where another lease
-- is held, ff (its own fence stays its lease's); on a free lock, the last
-- fence itself. An ending lease folds qf and ff into fence. Only ever raises:
-- a fence already at or above ARGV[2] is left as it is, so running it twice,
-- or late, changes nothing.

local token = arg_str(1, 'token', 256)
local fence = arg_int(2, 'fence', 1, 9007199254740991)

local now_ms = redis_now()

-- 0.1's fence key is raised too (it only ever raises), so a fence 0.1's scripts issue, which read only it, goes past this one.
local legacy = redis.call('GET', KEYS[2])
if tonumber(legacy or '0') < fence then redis.call('SET', KEYS[2], fmt(fence), 'PX', FENCE_KEEP_MS_ARG) end

local lock = redis.call('HMGET', KEYS[1], 'owner', 'qf', 'exp', 'ttl', 'lt', 'fence', 'ff')
local exp = lock[1] and lease_end(tonumber(lock[3]), tonumber(lock[5] or lock[4]), now_ms)
if exp and exp > now_ms then
  if lock[1] == token then
    if tonumber(lock[2] or '0') < fence then redis.call('HSET', KEYS[1], 'qf', fmt(fence)) end
    return {'status', 'ok', 'held', '1', 'remainingMs', fmt(exp - now_ms)}
  end
  if tonumber(lock[7] or '0') < fence then redis.call('HSET', KEYS[1], 'ff', fmt(fence)) end
  return {'status', 'ok', 'held', '0'}
end
-- Free (or lapsed): the last fence is the floor. A new hash gets the expiry every grant sets, and is
-- marked released as release.lua marks it (owner "", exp "0", with a ttl), so a 0.1 process finds it held.
local last = lock[6] or legacy
if tonumber(mutex_last_fence(last, lock[2], lock[7]) or '0') < fence then
  redis.call('HSET', KEYS[1], 'fence', fmt(fence))
  if not lock[1] then redis.call('HSET', KEYS[1], 'owner', '', 'exp', '0', 'ttl', lock[4] or '1') end
  redis.call('PEXPIRE', KEYS[1], MUTEX_KEEP_MS_ARG)
end
return {'status', 'ok', 'held', '0'}

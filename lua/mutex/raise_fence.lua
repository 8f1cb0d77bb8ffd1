-- mutex raise_fence: a quorum's second step after a grant. Each node of a
-- quorum issued its own fence; the grant's fence is the largest of the
-- majority's (or the one a first try already agreed), and this makes it the
-- node's floor too, so that any later majority (which shares a node with this
-- one) issues a larger fence. It also records it as the lease's agreed fence
-- (qf), which the node's later answers carry, so the quorum can tell the
-- lease's fence from one this node issued on its own for a grant that came
-- too late to be counted.
--
-- KEYS[1]  lock   hf:{mx:<ns>:<name>}         hash (see acquire.lua)
-- KEYS[2]  fence  hf:{mx:<ns>:<name>}:fence   the last fence issued here
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
-- Only ever raises: a fence key or qf already at or above ARGV[2] is left as
-- it is, so running it twice, or late, changes nothing.

local token = arg_str(1, 'token', 256)
local fence = arg_int(2, 'fence', 1, 9007199254740991)

local now_ms = redis_now()

local last = tonumber(redis.call('GET', KEYS[2]) or '0')
if last < fence then redis.call('SET', KEYS[2], fmt(fence), 'PX', FENCE_KEEP_MS_ARG) end

local lock = redis.call('HMGET', KEYS[1], 'owner', 'qf', 'exp', 'ttl', 'lt')
if lock[1] ~= token then return {'status', 'ok', 'held', '0'} end
if tonumber(lock[2] or '0') < fence then redis.call('HSET', KEYS[1], 'qf', fmt(fence)) end
return {'status', 'ok', 'held', '1', 'remainingMs', fmt(math.max(lease_end(tonumber(lock[3]), tonumber(lock[5] or lock[4]), now_ms) - now_ms, 0))}

-- mutex raise_fence: a quorum's second step after a grant. Each node of a
-- quorum issued its own fence; the grant's fence is the largest of the
-- majority's, and this makes it the node's floor too, so that any later
-- majority (which shares a node with this one) issues a larger fence.
--
-- KEYS[1]  lock   hf:{mx:<ns>:<name>}         hash (see acquire.lua)
-- KEYS[2]  fence  hf:{mx:<ns>:<name>}:fence   the last fence issued here
-- ARGV[1]  token: the grant's owner token
-- ARGV[2]  fence: the quorum grant's fence
-- ARGV[3]  fence keep ms (as in acquire.lua)
--
-- Returns name/value pairs:
--   status ok, held "1" when this node's lock is held by the token (its
--   fence field now says ARGV[2]), else "0"
--
-- Only ever raises: a fence key already at or above ARGV[2] is left as it
-- is, so running it twice, or late, changes nothing.

local token = arg_str(1, 'token', 256)
local fence = arg_int(2, 'fence', 1, 9007199254740991)
local fence_keep = arg_int(3, 'fence keep ms', 1, 31536000000)

local last = tonumber(redis.call('GET', KEYS[2]) or '0')
if last < fence then redis.call('SET', KEYS[2], fmt(fence), 'PX', fmt(fence_keep)) end

local lock = redis.call('HMGET', KEYS[1], 'owner', 'fence')
if lock[1] ~= token then return {'status', 'ok', 'held', '0'} end
if tonumber(lock[2]) < fence then redis.call('HSET', KEYS[1], 'fence', fmt(fence)) end
return {'status', 'ok', 'held', '1'}

-- mutex inspect: the mutex's state, never its token. Read-only.
--
-- flags: no-writes (Redis refuses any write; Upstash takes shared read locks)
--
-- KEYS[1]  lock   hf:{mx:<ns>:<name>}          the mutex's hash (acquire.lua, lua/FIELDS.md)
-- KEYS[2]  fence  hf:{mx:<ns>:<name>}:fence    0.1's last fence, read only when the hash keeps none
--
-- Returns name/value pairs: held "1"|"0", fence (or "" when none is
-- remembered), count, remainingMs, expiresAt (or "" when free), and
-- quorumFence when held on a quorum's database (see raise_fence.lua), and
-- holder (the label, "" for none); when free, delayedUntil (the end of a lapsed
-- lease's lock-delay, "" for none).

local now_ms = redis_now()
local lock = redis.call('HMGET', KEYS[1], 'owner', 'count', 'fence', 'exp', 'qf', 'ttl', 'lt', 'holder', 'ld', 'ff')
local exp = lock[1] and lease_end(tonumber(lock[4]), tonumber(lock[7] or lock[6]), now_ms)
if not exp or exp <= now_ms then
  -- Free: never held, released (owner "", exp "0"), or lapsed (its owner kept until the next grant), maybe in
  -- its lock-delay. Its last fence is the highest it keeps, a quorum's included (as the next grant's floor).
  local delayed = ''
  if exp and lock[9] and exp + tonumber(lock[9]) > now_ms then delayed = fmt(exp + tonumber(lock[9])) end
  return {'held', '0', 'fence', mutex_last_fence(lock[3] or redis.call('GET', KEYS[2]), lock[5], lock[10]) or '', 'count', '0', 'remainingMs', '0', 'expiresAt', '',
    'delayedUntil', delayed}
end
local r = {'held', '1', 'fence', lock[3], 'count', lock[2] or '1', 'remainingMs', fmt(exp - now_ms), 'expiresAt', fmt(exp),
  'holder', lock[8] or ''}
if lock[5] then
  r[#r + 1] = 'quorumFence'
  r[#r + 1] = lock[5]
end
return r

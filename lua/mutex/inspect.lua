-- mutex inspect: the mutex's state, never its token. Read-only.
--
-- flags: no-writes (Redis refuses any write; Upstash takes shared read locks)
--
-- KEYS[1]  lock   hf:{mx:<ns>:<name>}
-- KEYS[2]  fence  hf:{mx:<ns>:<name>}:fence
-- KEYS[3]  delay  hf:{mx:<ns>:<name>}:delay   a lapsed lease's lock-delay (delayedUntil while it lasts)
--
-- Returns name/value pairs: held "1"|"0", fence (or "" when none is
-- remembered), count, remainingMs, expiresAt (or "" when free), and
-- quorumFence when held on a quorum's database (see raise_fence.lua), and
-- holder (the label, "" for none); when free, delayedUntil (the end of a lapsed
-- lease's lock-delay, "" for none).

local now_ms = redis_now()
local lock = redis.call('HMGET', KEYS[1], 'owner', 'count', 'fence', 'exp', 'qf', 'ttl', 'lt', 'holder')
if not lock[1] then
  -- The delay key holds its own end (ms); one written by an older script held the delay: its time to live says the end.
  local delayed_until = tonumber(redis.call('GET', KEYS[3]) or '')
  if delayed_until and delayed_until <= now_ms then delayed_until = now_ms + redis.call('PTTL', KEYS[3]) end
  local delayed = ''
  if delayed_until and delayed_until > now_ms then delayed = fmt(delayed_until) end
  return {'held', '0', 'fence', redis.call('GET', KEYS[2]) or '', 'count', '0', 'remainingMs', '0', 'expiresAt', '', 'delayedUntil', delayed}
end
local exp = lease_end(tonumber(lock[4]), tonumber(lock[7] or lock[6]), now_ms)
local r = {'held', '1', 'fence', lock[3], 'count', lock[2] or '1', 'remainingMs', fmt(math.max(exp - now_ms, 0)), 'expiresAt', fmt(exp),
  'holder', lock[8] or ''}
if lock[5] then
  r[#r + 1] = 'quorumFence'
  r[#r + 1] = lock[5]
end
return r

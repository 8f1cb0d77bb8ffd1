-- idempotency_inspect_waiting: the key's state, as inspect, for a caller that
-- waits for the run's end (a wait socket's watch, through the key's lock
-- object); a start within its deadline is marked w (someone waits), so its
-- complete answers waited and the Worker tells the lock object.
--
-- KEYS[1]  record hf:{id:<ns>:<key>}
--
-- Returns name/value pairs, as inspect.lua:
--   state absent
--   state started, fence, expiresAt, holder          (the record now marked w)
--   state completed, fence, completedAt, response ("json:" .. text; prefix: see begin.lua)
--
-- The look and the mark are one step: a complete either ran before it (this
-- answers completed) or runs after it (and sees w), so no completion falls
-- between a waiter's look and its mark. begin.lua marks the same way when it
-- answers in_progress; nothing else writes w, and complete, fail and a new
-- start clear it. A waiter that nobody begins with costs nothing on the
-- begin/complete path: the mark is made here, not there.
--
-- Safe to run twice: the mark is a flag, set again to the same value. Takes
-- no arguments; time from Redis.

local now_ms = redis_now()

local rec = redis.call('HMGET', KEYS[1], 'state', 'fence', 'deadline', 'completedAt', 'response', 'ttl', 'lt', 'holder')
if rec[1] == 'completed' then
  return {'state', 'completed', 'fence', rec[2] or '0', 'completedAt', rec[4] or '0', 'response', 'json:' .. (rec[5] or 'null')}
end
if rec[1] == 'started' then
  local deadline = lease_end(tonumber(rec[3]) or 0, tonumber(rec[7] or rec[6]) or 0, now_ms)
  if deadline > now_ms then
    redis.call('HSET', KEYS[1], 'w', '1')
    return {'state', 'started', 'fence', rec[2], 'expiresAt', fmt(deadline), 'holder', rec[8] or ''}
  end
end
return {'state', 'absent'}

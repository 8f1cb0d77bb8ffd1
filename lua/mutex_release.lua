-- mutex_release: drop one level of the holder's re-entrant hold; delete the
-- lock at depth 0. Compare-and-delete: never touches another holder's lock.
--
-- KEYS[1]  lock hash hf:{mx:<ns>:<name>}
-- KEYS[2]  request   hf:{mx:<ns>:<name>}:rq:<id>
-- ARGV[1]  token
-- ARGV[2]  request memory ms
--
-- Returns {"ok", released "1"|"0", count, fence, watched "1"|"0"} or {"lost"}.
--
-- Safe to run twice: a retry with the same request id returns the first
-- answer (without it, a retried final release would answer "lost", and a
-- retried inner release would drop two levels).

local seen = redis.call('GET', KEYS[2])
if seen then return cjson.decode(seen) end

local function answer(r)
  redis.call('SET', KEYS[2], cjson.encode(r), 'PX', ARGV[2])
  return r
end

local lock = redis.call('HMGET', KEYS[1], 'owner', 'fence', 'watch')
if lock[1] ~= ARGV[1] then return answer({'lost'}) end

local count = redis.call('HINCRBY', KEYS[1], 'count', -1)
if count <= 0 then
  redis.call('DEL', KEYS[1])
  return answer({'ok', '1', '0', lock[2], lock[3] or '0'})
end
return answer({'ok', '0', string.format('%.0f', count), lock[2], lock[3] or '0'})

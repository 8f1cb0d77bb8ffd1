-- election observe: who leads, and the history of changes kept in the hash. Read-only.
--
-- flags: no-writes (Redis refuses any write; Upstash takes shared read locks)
--
-- KEYS[1]  lock  hf:{el:<ns>:<name>}   the election's hash (proclaim.lua, lua/FIELDS.md)
-- ARGV[1]  since: a position (0 .. 2^53 - 1); the changes after it are answered
--
-- Returns name/value pairs: held "1"|"0", and when held fence (the term), holder (the
-- value), expiresAt; position (the history's last, "0" when none), first (the
-- oldest position kept, "" when none), and changes: a JSON list of the kept
-- changes after `since`, each [position, term, value, at].

local since = arg_int(1, 'since', 0, 9007199254740991)
local now_ms = redis_now()
local lock = redis.call('HMGET', KEYS[1], 'owner', 'fence', 'exp', 'ttl', 'lt', 'holder', 'lp')
local position = tonumber(lock[7] or '0')
local first = math.max(position - 63, 1)
local changes = {}
for p = math.max(first, since + 1), position do
  local entry = redis.call('HGET', KEYS[1], 'l:' .. fmt(p))
  if entry then changes[#changes + 1] = '[' .. fmt(p) .. ',' .. string.sub(entry, 2) end
end
local r = {'position', fmt(position), 'first', position > 0 and fmt(first) or '', 'changes', '[' .. table.concat(changes, ',') .. ']'}
local exp = lock[1] and lock[1] ~= '' and lease_end(tonumber(lock[3]), tonumber(lock[5] or lock[4]), now_ms)
if not exp or exp <= now_ms then
  r[#r + 1] = 'held'
  r[#r + 1] = '0'
  return r
end
for _, v in ipairs({'held', '1', 'fence', lock[2], 'holder', lock[6] or '', 'expiresAt', fmt(exp)}) do r[#r + 1] = v end
return r

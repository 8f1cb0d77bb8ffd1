-- flow inspect: the limit in force, the slots held, the starts in the
-- window and when it admits the next, never tokens. Read-only.
--
-- flags: no-writes (Redis refuses any write; Upstash takes shared read locks)
--
-- KEYS[1]  lock    hf:{flow:<ns>:<name>}
-- KEYS[2]  starts  hf:{flow:<ns>:<name>}:starts
-- KEYS[3]  limit   hf:{flow:<ns>:<name>}:limit
--
-- Returns name/value pairs: limit (as flow/acquire.lua's limit_mismatch, ""
-- when none is in force), held, holderLabels (a JSON list: the labels of the
-- first holders to end, at most 10), expiresAt (when the first holder's lease
-- ends, "" when nobody holds), starts (grants in the window ending now, ""
-- without a rate), nextStartAt (when the window admits a start, "" when it
-- does now).
-- uses: holders

local now_ms = redis_now()
local live, n = holders_load(KEYS[1], now_ms, false)
local in_force = redis.call('GET', KEYS[3])
local first = nil
for _, rec in pairs(live) do
  in_force = rec.lim
  local exp = tonumber(rec.exp)
  if not first or exp < first then first = exp end
end
local starts, next_at = '', ''
local count, per = string.match(in_force or '', '^%d*/(%d*)/(%d*)$')
if count and count ~= '' then
  count, per = tonumber(count), tonumber(per)
  local total = redis.call('ZCARD', KEYS[2])
  local k = redis.call('ZCOUNT', KEYS[2], '(' .. fmt(now_ms - per), '+inf')
  starts = fmt(k)
  if k >= count then next_at = fmt(tonumber(redis.call('ZRANGE', KEYS[2], total - count, total - count, 'WITHSCORES')[2]) + per) end
end
return {'limit', in_force or '', 'held', fmt(n), 'holderLabels', holders_labels(live), 'expiresAt', first and fmt(first) or '',
  'starts', starts, 'nextStartAt', next_at}

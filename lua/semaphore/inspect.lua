-- semaphore inspect: the limit and the permits in use, never tokens. Read-only.
--
-- flags: no-writes (Redis refuses any write; Upstash takes shared read locks)
--
-- KEYS[1]  lock  hf:{sem:<ns>:<name>}
--
-- Returns name/value pairs: limit ("" when nobody holds), used, holders,
-- holderLabels (a JSON list: the labels of the first holders to end, at most 10),
-- expiresAt (when the first holder's lease ends, "" when nobody holds).
-- uses: holders

local live, n, _, other = holders_load(KEYS[1], redis_now(), false)
local used, first = 0, nil
for _, rec in pairs(live) do
  used = used + rec.p
  local exp = tonumber(rec.exp)
  if not first or exp < first then first = exp end
end
return {'limit', n > 0 and other.limit or '', 'used', fmt(used), 'holders', fmt(n), 'holderLabels', holders_labels(live),
  'expiresAt', first and fmt(first) or ''}

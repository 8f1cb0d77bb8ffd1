-- rwlock inspect: who holds the lock, never their tokens. Read-only.
--
-- flags: no-writes (Redis refuses any write; Upstash takes shared read locks)
--
-- KEYS[1]  lock   hf:{rw:<ns>:<name>}
-- KEYS[2]  fence  hf:{rw:<ns>:<name>}:fence
--
-- Returns name/value pairs: mode (free|read|write), readers (holders with
-- a read hold), writer ("1"|"0"), fence (the holders' fence, or the last
-- issued when free; "" when none is remembered), holderLabels (a JSON list:
-- the labels of the first holders to end, at most 10), expiresAt (when the
-- first holder's lease ends, "" when free).
-- uses: holders

local live = holders_load(KEYS[1], redis_now(), false)
local readers, writer, fence, first = 0, false, nil, nil
for _, rec in pairs(live) do
  if rec.r > 0 then readers = readers + 1 end
  if rec.w > 0 then writer = true end
  fence = rec.f
  local exp = tonumber(rec.exp)
  if not first or exp < first then first = exp end
end
local mode = 'free'
if writer then mode = 'write' elseif readers > 0 then mode = 'read' end
if not fence then fence = redis.call('GET', KEYS[2]) or '' end
return {'mode', mode, 'readers', fmt(readers), 'writer', writer and '1' or '0', 'fence', fence, 'holderLabels', holders_labels(live),
  'expiresAt', first and fmt(first) or ''}

-- holders: per-holder leases, shared by the read-write lock and the
-- semaphore (the functions a script calls are prepended to scripts that say
-- "-- uses: holders", as the prelude's are).
--
-- KEYS     none of its own: its functions take the lock's hash and gate keys
--          from the script, which names them in its KEYS.
-- ARGV     none: it reads no argument.
-- Returns  nothing: it defines functions (load, save, gate) for the script.
--
-- A lock's hash keeps one field "h:<token>" per holder, a JSON record:
--   ttl  lease length in ms of its last acquire (a heartbeat's default)
--   lt   lease length of its last heartbeat (the lease's length since)
--   exp  when its lease ends, Redis ms (as lease_end moves it on a clock that went back)
--   f    its fence
--   wt   "1" when watched for onExpire
--   hl   its holder label, when it gave one
--   pk   set on a grant from the line until the holder shows a sign of life
--        (the lock object may take back a grant that is never picked up)
--   and the kind's counts: w and r (read-write lock), p (semaphore)
-- Large numbers are kept as strings (cjson keeps 14 digits). Other fields of
-- the hash belong to the kind (the semaphore's "limit"). The hash expires
-- with its last lease, and a lapsed holder is dropped by the next write.
--
-- The gate (KEYS "...:gate", hash: token) is the lock object's first waiter
-- that could not be granted: while it exists, try-locks are busy (no
-- barging). Token "" stands for waiters not yet looked at.

-- writes: the caller may write (not a no-writes script), so a lease moved by
-- lease_end (a clock that went back) is stored as moved.
local function holders_load(key, now_ms, writes)
  local flat = redis.call('HGETALL', key)
  local live, dead, other, n = {}, {}, {}, 0
  for i = 1, #flat, 2 do
    local field = flat[i]
    if string.sub(field, 1, 2) == 'h:' then
      local rec = cjson.decode(flat[i + 1])
      local exp = tonumber(rec.exp)
      local stands = lease_end(exp, tonumber(rec.lt or rec.ttl), now_ms)
      if stands < exp then
        rec.exp = fmt(stands)
        if writes then redis.call('HSET', key, field, cjson.encode(rec)) end
      end
      if stands > now_ms then
        live[string.sub(field, 3)] = rec
        n = n + 1
      else
        dead[#dead + 1] = field
      end
    else
      other[field] = flat[i + 1]
    end
  end
  return live, n, dead, other
end

local function holders_put(key, token, rec)
  redis.call('HSET', key, 'h:' .. token, cjson.encode(rec))
end

-- After a write: drop lapsed holders, and let the hash live exactly as long
-- as its longest lease (or go, with the kind's fields, when nobody holds).
local function holders_settle(key, live, dead)
  if #dead > 0 then redis.call('HDEL', key, unpack(dead)) end
  local last = nil
  for _, rec in pairs(live) do
    local exp = tonumber(rec.exp)
    if not last or exp > last then last = exp end
  end
  if last then redis.call('PEXPIREAT', key, fmt(last)) else redis.call('DEL', key) end
end

-- The earliest lease end among holders for which pred(rec) is true, or nil;
-- and that holder's record (its label, hl, is who a busy caller is told of).
local function holders_first_end(live, pred)
  local first, first_rec = nil, nil
  for _, rec in pairs(live) do
    local exp = tonumber(rec.exp)
    if pred(rec) and (not first or exp < first) then first, first_rec = exp, rec end
  end
  return first, first_rec
end

-- A busy answer: retry after the blocking lease ends, and who holds it (its label, "" for none).
local function holders_busy(until_ms, rec, now_ms)
  return {'status', 'busy', 'retryAfterMs', fmt(math.max(until_ms - now_ms, 1)), 'queued', '0', 'holder', rec.hl or '',
    'expiresAt', fmt(until_ms)}
end

-- The labels of the first holders to end (at most 10), for inspect: a JSON list.
local function holders_labels(live)
  local recs = {}
  for _, rec in pairs(live) do if rec.hl then recs[#recs + 1] = rec end end
  table.sort(recs, function(a, b) return tonumber(a.exp) < tonumber(b.exp) end)
  local labels = {}
  for i = 1, math.min(#recs, 10) do labels[i] = recs[i].hl end
  if #labels == 0 then return '[]' end
  return cjson.encode(labels)
end

local function holders_last_end(live)
  local last = nil
  for _, rec in pairs(live) do
    local exp = tonumber(rec.exp)
    if not last or exp > last then last = exp end
  end
  return last
end

-- A holder showed a sign of life (its acquire repeated by a retry): a grant
-- from the line is picked up, so the lock object will not take it back.
local function holders_picked_up(key, token, rec)
  if rec.pk then
    rec.pk = nil
    holders_put(key, token, rec)
  end
end

-- A queue step left a waiter in line: it keeps try-locks out until the
-- lease it waits behind ends, plus the grace in which the object renews it.
local function gate_set(key, token, until_ms)
  redis.call('HSET', key, 'token', token)
  redis.call('PEXPIREAT', key, fmt(until_ms))
end

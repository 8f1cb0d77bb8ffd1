-- prelude: prepended to every script by tools/gen-lua-scripts.mjs.
-- Argument checks raise an error reply before the script's first write, so
-- a bad argument can never leave a half-written lock (for example a hash with
-- no expiry). Replies are flat name/value lists, decoded by name.
--
-- KEYS     none of its own: its functions touch only keys the script passes
--          them, each named in the script's KEYS.
-- ARGV     the caller's clock in microseconds, appended last by ScriptRunner
--          and taken off here (below); the script's own ARGV come before it.
-- Returns  nothing: it defines functions (argument checks, Redis time,
--          fences, answer memory) for the script that follows.

local function bad_arg(name, why)
  error({err = 'ERR holdfast: ' .. name .. ' ' .. why})
end

-- Integers as strings, so large values survive JSON round trips exactly. %d,
-- not %.0f: every value here is an integer below 2^53, and the float printer
-- cost about 7 % of Redis's work per cycle.
local function fmt(n) return string.format('%d', n) end

-- (Checks here are plain comparisons: a script's hot path runs them on every
-- call, and in Redis's Lua a library call or a number/text conversion costs
-- about as much as a small Redis command.)
local function arg_int(i, name, min, max)
  local v = tonumber(ARGV[i])
  if not v or v ~= v or v % 1 ~= 0 or v < min or v > max then
    bad_arg(name, string.format('must be an integer from %.0f to %.0f, got %s', min, max, tostring(ARGV[i])))
  end
  return v
end

local function arg_str(i, name, max_len)
  local v = ARGV[i]
  if type(v) ~= 'string' or #v < 1 or #v > max_len then bad_arg(name, 'must be 1 to ' .. max_len .. ' bytes') end
  return v
end

-- "0" or "1".
local function arg_flag(i, name)
  local v = ARGV[i]
  if v ~= '0' and v ~= '1' then bad_arg(name, 'must be 0 or 1, got ' .. tostring(v)) end
  return v
end

local function arg_one_of(i, name, allowed)
  local v = ARGV[i]
  for _, a in ipairs(allowed) do if v == a then return v end end
  bad_arg(name, 'must be one of ' .. table.concat(allowed, ', ') .. ', got ' .. tostring(v))
end

-- The caller's clock in microseconds, as text: ScriptRunner appends it to
-- the ARGV of every script that issues fences (the ones that call
-- fence_floor; tools/gen-lua-scripts.mjs includes this block in just those
-- and says which), and it is taken off here, so each script's own ARGV is as
-- its header says. It is only ever a floor for fences, read by fence_floor.
local CALLER_CLOCK = ARGV[#ARGV] or ''
ARGV[#ARGV] = nil

-- Redis's clock, never the client's, for leases: milliseconds, and the same
-- instant as microsecond digits (text: the floor fence_floor starts from).
local function redis_now()
  local t = redis.call('TIME')
  local us = t[2]
  if #us < 6 then us = string.sub('00000', #us) .. us end
  local now_text = t[1] .. us
  local now_us = tonumber(now_text)
  return (now_us - now_us % 1000) / 1000, now_text
end

-- The floor for new fences, as text (issue_fence's argument): Redis's clock
-- in microseconds (redis_now's text), or the caller's when that is ahead (by
-- at most a day), so that fences keep rising when Redis lost its last fence
-- AND its clock went back (see docs/guarantees.md). Digit texts of one length
-- compare as their numbers do, so the usual case (the caller's clock not
-- ahead) converts nothing; only a caller's clock ahead (or of another length)
-- is read as a number, and checked: scripts call this before their first
-- write.
local function fence_floor(now_text)
  if #CALLER_CLOCK == #now_text and CALLER_CLOCK <= now_text then return now_text end
  local c = tonumber(CALLER_CLOCK)
  if not c or c % 1 ~= 0 or c < 0 or c > 9007199254740991 then
    bad_arg("caller clock", "must be the caller's time in microseconds")
  end
  local now_us = tonumber(now_text)
  if c > now_us then return fmt(math.min(c, now_us + 86400000000)) end
  return now_text
end

-- A lease's end as it stands on a store clock that may have gone back.
-- Leases run on Redis's clock, so a clock stepped back by S would keep every
-- lease S longer. A script sees such a step when TIME is earlier than the
-- lease's own last write (its end minus its length, exp - len): the lease
-- then ends len from now at the latest, what it had left at that write, as
-- if no time had passed since. So a lease outlives its TTL by at most the time
-- from its last write to the first call after the step, never by the whole
-- step (docs/guarantees.md, promise 6). Writing scripts store the end they get
-- (HSET and PEXPIREAT), so it stays put as the clock moves on.
local function lease_end(exp, len, now_ms)
  if now_ms < exp - len then return now_ms + len end
  return exp
end

-- A write's answer, remembered under its request key for a retry and
-- returned as the same JSON text: a reply list is encoded once (a hot path
-- passes its JSON text ready-made), and a retry that finds it returns it as
-- it is (the generated wrapper passes JSON text through).
local function remember(request_key, reply)
  local text = reply
  if type(reply) ~= 'string' then text = cjson.encode(reply) end
  redis.call('PSETEX', request_key, REQUEST_MEMORY_MS_ARG, text)
  return text
end

-- The next fence of a lock, as text: max(last + 1, floor), floor being
-- fence_floor's (text), stored back as the last (kept FENCE_KEEP_MS). One
-- SET ... GET on the usual path, where the floor is past the last fence: our
-- fences are digits, and digit texts of one length compare as their numbers
-- do, so that path converts nothing. A second SET only when it is not (grants
-- within one microsecond, a clock that went back, or a stored value of
-- another length, compared as numbers).
-- A last fence at or past 2^53 - 1 has no next one a double (Lua's number,
-- and JSON's) represents exactly: 2^53 + 1 would be issued as 2^53 again.
-- Such a key (corrupted, or written by something else) is put back as it was
-- and the call fails, so no grant ever gets a fence that did not go up.
local function issue_fence(fence_key, floor)
  local stored = redis.call('SET', fence_key, floor, 'PX', FENCE_KEEP_MS_ARG, 'GET')
  if not stored or (#stored == #floor and stored < floor) then return floor end
  local last = tonumber(stored)
  if last and last < tonumber(floor) then return floor end
  if not last or last >= 9007199254740991 then
    redis.call('SET', fence_key, stored, 'PX', FENCE_KEEP_MS_ARG)
    error({err = 'ERR holdfast: the stored fence ' .. string.sub(tostring(stored), 1, 40) .. ' has no next fence below 2^53'})
  end
  local fence = fmt(last + 1)
  redis.call('SET', fence_key, fence, 'PX', FENCE_KEEP_MS_ARG)
  return fence
end

-- A mutex's next fence, as text, from the last one its hash keeps (field
-- fence, text or nil) and fence_floor's floor: max(last + 1, floor), as
-- issue_fence, but written by the caller with the grant (HSET), so it costs
-- no command of its own. Digit texts of one length compare as their numbers
-- do, so the usual case converts nothing. A last fence at or past 2^53 - 1
-- fails the call before any write (nothing changes): no grant ever gets a
-- fence that did not go up.
local function next_fence(last, floor)
  if not last or (#last == #floor and last < floor) then return floor end
  local n = tonumber(last)
  if n and n < tonumber(floor) then return floor end
  if not n or n >= 9007199254740991 then
    error({err = 'ERR holdfast: the stored fence ' .. string.sub(tostring(last), 1, 40) .. ' has no next fence below 2^53'})
  end
  return fmt(n + 1)
end

-- The highest of a mutex hash's fences as text: its last issued (fence), a
-- quorum's agreed fence for the lease (qf) and a quorum's raised floor (ff).
-- An ending lease folds them into fence, so the next grant reads one field.
local function mutex_last_fence(fence, qf, ff)
  local last = fence
  if qf and (not last or tonumber(qf) > tonumber(last)) then last = qf end
  if ff and (not last or tonumber(ff) > tonumber(last)) then last = ff end
  return last
end

-- Redis's clock in milliseconds as digits, for a lease's end (exp) to be
-- compared with as text: digit texts of one length compare as their numbers
-- do, and a script that only asks whether a lease lapsed converts nothing.
local function redis_now_ms_text()
  local t = redis.call('TIME')
  return t[1] .. string.sub('000000' .. t[2], -6, -4)
end

-- Whether a mutex lease's end (exp, ms digits) is still ahead of now_ms_text.
local function lease_live(exp, now_ms_text)
  if #exp == #now_ms_text then return exp > now_ms_text end
  return tonumber(exp) > tonumber(now_ms_text)
end

-- A mutex fence above Redis's clock (the caller's clock ahead, last + 1, a
-- quorum's) written to 0.1's fence key too (fence_key: KEYS' `:fence`), so a
-- fence issued later by 0.1's scripts, which read only that key (where a 0.1
-- release or lapse took the hash with it), still goes past it. A fence that
-- is Redis's now (now_us) needs none: any later floor is past it.
local function keep_legacy_fence(fence_key, fence, now_us)
  if fence ~= now_us then redis.call('SET', fence_key, fence, 'PX', FENCE_KEEP_MS_ARG) end
end

-- An election's history (lua/FIELDS.md, fields lp and l:<position> of its
-- hash): the change (a new leader's term, or a proclaim) appended at the next
-- position, as JSON text [term, value, at], the oldest past the last 64
-- dropped. Returns the position.
local function history_add(key, fence, value, now_ms)
  local pos = redis.call('HINCRBY', key, 'lp', 1)
  redis.call('HSET', key, 'l:' .. pos, '[' .. fence .. ',' .. cjson.encode(value or '') .. ',' .. fmt(now_ms) .. ']')
  if pos > 64 then redis.call('HDEL', key, 'l:' .. fmt(pos - 64)) end
  return pos
end

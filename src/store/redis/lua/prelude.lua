-- prelude: prepended to every script by tools/gen-lua-scripts.mjs.
-- Argument checks raise an error reply before the script's first write, so
-- a bad argument can never leave a half-written lock (for example a hash with
-- no expiry). Replies are flat name/value lists, decoded by name.

local function bad_arg(name, why)
  error({err = 'ERR holdfast: ' .. name .. ' ' .. why})
end

local function arg_int(i, name, min, max)
  local v = tonumber(ARGV[i])
  if not v or v ~= v or v ~= math.floor(v) or v < min or v > max then
    bad_arg(name, string.format('must be an integer from %.0f to %.0f, got %s', min, max, tostring(ARGV[i])))
  end
  return v
end

local function arg_str(i, name, max_len)
  local v = ARGV[i]
  if type(v) ~= 'string' or #v < 1 or #v > max_len then bad_arg(name, 'must be 1 to ' .. max_len .. ' bytes') end
  return v
end

local function arg_one_of(i, name, allowed)
  local v = ARGV[i]
  for _, a in ipairs(allowed) do if v == a then return v end end
  bad_arg(name, 'must be one of ' .. table.concat(allowed, ', ') .. ', got ' .. tostring(v))
end

-- Redis's clock, never the client's: milliseconds and microseconds.
local function redis_now()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000), tonumber(t[1]) * 1000000 + tonumber(t[2])
end

-- Integers as strings, so large values survive JSON round trips exactly.
local function fmt(n) return string.format('%.0f', n) end


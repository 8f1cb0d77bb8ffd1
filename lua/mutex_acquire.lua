-- mutex_acquire: grant a free mutex, or re-enter it with the token you hold.
--
-- KEYS[1]  lock hash  hf:{mx:<ns>:<name>}          fields owner, count, fence, ttl, exp, watch
-- KEYS[2]  last fence hf:{mx:<ns>:<name>}:fence      kept ARGV[5] ms after every grant
-- KEYS[3]  request    hf:{mx:<ns>:<name>}:rq:<id>    this request's answer, for retries
-- ARGV[1]  token: the new owner token, or the held token when re-entering
-- ARGV[2]  ttlMs of the lease
-- ARGV[3]  "new" | "reenter"
-- ARGV[4]  "1" to mark the lease as watched by its room (waiters, onExpire), else "0"
-- ARGV[5]  fence keep ms
-- ARGV[6]  request memory ms
--
-- Returns (every field a string, so big numbers survive JSON round trips):
--   {"granted", token, fence, ttlMs, expiresAt, count}
--   {"busy", retryAfterMs, expiresAt}      held by someone else
--   {"lost"}                               re-entry with a token that does not hold it
--
-- Safe to run twice: a retry with the same request id returns the first answer.
-- Fence = max(last fence + 1, Redis time in microseconds), so it never goes
-- backwards even after the fence key expires.

local seen = redis.call('GET', KEYS[3])
if seen then return cjson.decode(seen) end

local function fmt(n) return string.format('%.0f', n) end
local function answer(r)
  redis.call('SET', KEYS[3], cjson.encode(r), 'PX', ARGV[6])
  return r
end

local t = redis.call('TIME')
local now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local now_us = tonumber(t[1]) * 1000000 + tonumber(t[2])
local token, ttl, mode = ARGV[1], tonumber(ARGV[2]), ARGV[3]

local owner = redis.call('HGET', KEYS[1], 'owner')

if mode == 'reenter' then
  if owner ~= token then return answer({'lost'}) end
  local count = redis.call('HINCRBY', KEYS[1], 'count', 1)
  if ARGV[4] == '1' then redis.call('HSET', KEYS[1], 'watch', '1') end
  redis.call('HSET', KEYS[1], 'ttl', ttl, 'exp', fmt(now_ms + ttl))
  redis.call('PEXPIREAT', KEYS[1], now_ms + ttl)
  local fence = redis.call('HGET', KEYS[1], 'fence')
  return answer({'granted', token, fence, fmt(ttl), fmt(now_ms + ttl), fmt(count)})
end

if owner then
  if ARGV[4] == '1' then redis.call('HSET', KEYS[1], 'watch', '1') end
  local exp = tonumber(redis.call('HGET', KEYS[1], 'exp'))
  return answer({'busy', fmt(math.max(exp - now_ms, 1)), fmt(exp)})
end

local last = tonumber(redis.call('GET', KEYS[2]) or '0')
local fence = math.max(last + 1, now_us)
redis.call('SET', KEYS[2], fmt(fence), 'PX', ARGV[5])
redis.call('HSET', KEYS[1], 'owner', token, 'count', 1, 'fence', fmt(fence), 'ttl', ttl, 'exp', fmt(now_ms + ttl), 'watch', ARGV[4])
-- The key expires at exactly the expiresAt we answer, so every reply agrees.
redis.call('PEXPIREAT', KEYS[1], now_ms + ttl)
return answer({'granted', token, fmt(fence), fmt(ttl), fmt(now_ms + ttl), '1'})

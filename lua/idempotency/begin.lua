-- idempotency_begin: start work on an idempotency key, or say why not.
--
-- KEYS[1]  record     hf:{id:<ns>:<key>}          hash: state, token, fence, fp, deadline, ttl, retain, holder,
--                                                   and once completed: response, completedAt
-- KEYS[2]  last fence hf:{id:<ns>:<key>}:fence     kept FENCE_KEEP_MS after every start
-- KEYS[3]  request    hf:{id:<ns>:<key>}:rq:<id>   this request's "started" answer, for retries
-- KEYS[4]  watchers hf:{id:<ns>:<key>}:watchers  passed only by the Worker: exists while the lock
--                                                 object has watch sockets (lua/FIELDS.md)
-- ARGV[1]  token: the new owner token, used only if this begin starts the work
-- ARGV[2]  ttlMs: the owner must complete or heartbeat within this
-- ARGV[3]  retainMs: how long the record (its fingerprint, later its response) is kept
-- ARGV[4]  fingerprint, or "" for none
-- ARGV[5]  holder: the owner's label, or "" for none
--
-- Returns name/value pairs (every value a string, so big numbers survive JSON):
--   status started, token, fence, ttlMs, expiresAt        you own the work now (and watchers "1"
--                                                         when KEYS[4] was passed and exists)
--   status completed, response ("json:" .. text), completedAt, fence
--   status in_progress, retryAfterMs, expiresAt, holder   another owner is within its deadline (holder: its label);
--                                                         the record is marked w (someone waited), so
--                                                         its complete tells the key's lock object
--   status mismatch                                       both fingerprints present and different
--
-- The response carries a "json:" prefix so a client that JSON-parses string
-- replies (@upstash/redis does by default) hands it back untouched.
--
-- Safe to run twice: a retry of a begin that started gets the same token back
-- while that start stands (without that, it would see its own start as
-- in_progress). A retry that comes after its start lapsed, or after it was
-- failed, completed or taken over, is evaluated again as any begin is: a
-- start handed back then would let the retry's caller run the work beside
-- the caller that took the key over. The other answers change nothing, so a
-- retry simply evaluates again; not remembering them keeps replays of a
-- large response from piling up copies.
--
-- A start whose deadline passed (the owner vanished) is taken over with a new
-- token and fence: the old token can then neither heartbeat, complete nor
-- fail. The record outlives the deadline by retainMs so a vanished owner's
-- fingerprint still guards the key.

local token = arg_str(1, 'token', 256)
local ttl = arg_int(2, 'ttlMs', 1, 86400000)
local retain = arg_int(3, 'retainMs', 1, 2592000000)
local fp = ARGV[4]
if type(fp) ~= 'string' or #fp > 1024 then bad_arg('fingerprint', 'must be at most 1024 bytes') end
local holder = ARGV[5] or ''
if #holder > 1024 then bad_arg('holder', 'must be at most 1024 bytes') end

local now_ms, now_us = redis_now()
local floor = fence_floor(now_us) -- before the first write: it checks the caller's clock

local rec = redis.call('HMGET', KEYS[1], 'state', 'fp', 'deadline', 'fence', 'response', 'completedAt', 'ttl', 'lt', 'holder', 'token')
local state, old_fp = rec[1], rec[2] or ''

-- This request's start, replayed while it stands: the record is still that start (the token it
-- answered, the 4th item of the remembered list), within its deadline as the clock rule reads it
-- (lease_end). Decoded only on a retry.
local seen = redis.call('GET', KEYS[3])
if seen and state == 'started' and rec[10] == cjson.decode(seen)[4]
  and lease_end(tonumber(rec[3]) or 0, tonumber(rec[8] or rec[7]) or 0, now_ms) > now_ms then
  return seen
end

if state and old_fp ~= '' and fp ~= '' and old_fp ~= fp then return {'status', 'mismatch'} end

if state == 'completed' then
  return {'status', 'completed', 'response', 'json:' .. (rec[5] or 'null'), 'completedAt', rec[6] or '0', 'fence', rec[4] or '0'}
end

if state == 'started' then
  local deadline = tonumber(rec[3]) or 0
  local stands = lease_end(deadline, tonumber(rec[8] or rec[7]) or 0, now_ms)
  if stands < deadline then
    deadline = stands
    redis.call('HSET', KEYS[1], 'deadline', fmt(deadline))
  end
  if deadline > now_ms then
    redis.call('HSET', KEYS[1], 'w', '1')
    return {'status', 'in_progress', 'retryAfterMs', fmt(deadline - now_ms), 'expiresAt', fmt(deadline), 'holder', rec[9] or ''}
  end
end

-- The first fingerprint sticks: a start without one keeps the vanished owner's.
if fp == '' then fp = old_fp end

local fence = issue_fence(KEYS[2], floor)
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'state', 'started', 'token', token, 'fence', fence, 'fp', fp,
  'deadline', fmt(now_ms + ttl), 'ttl', fmt(ttl), 'retain', fmt(retain))
if holder ~= '' then redis.call('HSET', KEYS[1], 'holder', holder) end
-- Absolute expiry, so it matches the deadline we answer to the millisecond.
redis.call('PEXPIREAT', KEYS[1], fmt(now_ms + math.max(ttl, retain)))

local r = {'status', 'started', 'token', token, 'fence', fence, 'ttlMs', fmt(ttl), 'expiresAt', fmt(now_ms + ttl)}
if KEYS[4] and redis.call('EXISTS', KEYS[4]) == 1 then
  r[#r + 1] = 'watchers'
  r[#r + 1] = '1'
end
return remember(KEYS[3], r)

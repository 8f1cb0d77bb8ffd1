-- holders heartbeat: extend one holder's lease (read-write lock, semaphore).
--
-- KEYS[1]  lock  hf:{<rw|sem>:<ns>:<name>}        hash of holders (see holders.lua)
-- KEYS[2]  gate  hf:{<rw|sem>:<ns>:<name>}:gate   the lock object's first waiter, if any
-- ARGV[1]  token
-- ARGV[2]  ttlMs (1 .. 86400000), or "" for the ttl of the holder's last acquire
-- ARGV[3]  registration grace ms: the gate lives this long past the leases it waits behind
--
-- Returns name/value pairs: status ok, expiresAt, ttlMs, fence; or status lost.
--
-- The holder's sign of life: it also marks a grant from the line picked up
-- (pk), so the lock object will not take it back. Safe to run twice: a
-- repeat sets the same lease again from Redis's now.
-- uses: holders

local token = arg_str(1, 'token', 256)
local ttl_arg = nil
if ARGV[2] ~= '' then ttl_arg = arg_int(2, 'ttlMs', 1, 86400000) end
local grace = arg_int(3, 'registration grace ms', 1, 86400000)

local now_ms = redis_now()
local live, _, dead = holders_load(KEYS[1], now_ms)
local mine = live[token]
if not mine then return {'status', 'lost'} end

local ttl = ttl_arg or tonumber(mine.ttl)
mine.exp = fmt(now_ms + ttl)
mine.pk = nil
holders_put(KEYS[1], token, mine)
holders_settle(KEYS[1], live, dead)
-- The gate lives as long as what it waits behind (never shortened).
local gate_left = redis.call('PTTL', KEYS[2])
if gate_left > 0 and gate_left < ttl + grace and redis.call('HGET', KEYS[2], 'token') ~= '' then
  redis.call('PEXPIREAT', KEYS[2], fmt(now_ms + ttl + grace))
end
return {'status', 'ok', 'expiresAt', mine.exp, 'ttlMs', fmt(ttl), 'fence', mine.f}

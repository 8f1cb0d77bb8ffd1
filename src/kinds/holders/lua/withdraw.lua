-- holders withdraw: the lock object takes a waiter out of line, e.g. one
-- whose client gave up or never picked up the grant it was made.
--
-- KEYS[1]  lock  hf:{<rw|sem>:<ns>:<name>}
-- KEYS[2]  gate  hf:{<rw|sem>:<ns>:<name>}:gate
-- ARGV[1]  the waiter's token
--
-- Returns name/value pairs: status unregistered (it held the gate: try-locks
-- may pass until the object looks at its line again), revoked + fence (it had
-- a grant still marked not picked up: taken back), or none.
--
-- A grant is only taken back while it is marked pk: a heartbeat, re-entry or
-- release by its holder ends that first. Safe to run twice: a repeat finds
-- nothing and answers none.
-- uses: holders

local token = arg_str(1, 'token', 256)

if redis.call('HGET', KEYS[2], 'token') == token then
  redis.call('DEL', KEYS[2])
  return {'status', 'unregistered'}
end
local live, _, dead = holders_load(KEYS[1], redis_now())
local mine = live[token]
if not mine or not mine.pk then return {'status', 'none'} end
redis.call('HDEL', KEYS[1], 'h:' .. token)
live[token] = nil
holders_settle(KEYS[1], live, dead)
return {'status', 'revoked', 'fence', mine.f}

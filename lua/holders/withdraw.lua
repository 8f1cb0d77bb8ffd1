-- holders withdraw: the lock object takes a waiter out of line, e.g. one
-- whose client gave up or never picked up the grant it was made.
--
-- KEYS[1]  lock  hf:{<rw|sem>:<ns>:<name>}
-- KEYS[2]  gate  hf:{<rw|sem>:<ns>:<name>}:gate
-- ARGV[1]  the waiter's token
-- ARGV[2]  reason: left (it left the line before any grant reached it: nobody
--          has its token, so a grant to it is taken back whatever its pk mark)
--          | unclaimed (its grant was answered but not picked up in time: taken
--          back only while still marked pk)
--
-- Returns name/value pairs: status unregistered (it held the gate: try-locks
-- may pass until the object looks at its line again), revoked + fence (its
-- grant was taken back), or none.
--
-- An answered grant is only taken back while it is marked pk: a heartbeat,
-- re-entry or release by its holder ends that first. Safe to run twice: a
-- repeat finds nothing and answers none.
-- uses: holders

local token = arg_str(1, 'token', 256)
local reason = arg_one_of(2, 'reason', {'left', 'unclaimed'})

if redis.call('HGET', KEYS[2], 'token') == token then
  redis.call('DEL', KEYS[2])
  return {'status', 'unregistered'}
end
local live, _, dead = holders_load(KEYS[1], redis_now(), true)
local mine = live[token]
if not mine or (reason == 'unclaimed' and not mine.pk) then return {'status', 'none'} end
redis.call('HDEL', KEYS[1], 'h:' .. token)
live[token] = nil
holders_settle(KEYS[1], live, dead)
return {'status', 'revoked', 'fence', mine.f}

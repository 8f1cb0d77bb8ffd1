-- holders ungate: the lock object's line is empty, so no gate may stand: drop
-- one that a line lost with a restarted object left behind (otherwise it
-- would keep try-locks out until the holders' leases end).
--
-- KEYS[1]  gate  hf:{<rw|sem>:<ns>:<name>}:gate
-- (no ARGV)
--
-- Returns name/value pairs: status ok, dropped ("1" when a gate was there).
-- Safe to run twice: a repeat finds nothing.

return {'status', 'ok', 'dropped', tostring(redis.call('DEL', KEYS[1]))}

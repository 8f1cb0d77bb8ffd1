/**
 * The Lua of the Redis fence helpers (redis.ts). Kept here rather than under
 * lua/: tools/gen-lua-scripts.mjs embeds every folder of lua/ into the
 * Worker's bundle, and these scripts are the library's and clients', never the
 * Worker's. Each is one script, one round trip, with Upstash's key-locking
 * flag like every other holdfast script (only its KEYS are locked; it touches
 * no other key).
 *
 * Every script: KEYS[1] the resource's fence key, ARGV[1] the fence (decimal
 * text, checked by the caller and again here). It checks, then writes, then
 * records the fence: a write that Redis refuses (INCRBY on a value that is not
 * an integer) raises before the fence is recorded, so nothing changes.
 * Replies: {'ok', <answer>}, {'stale', <stored fence>}, {'corrupt', <what is stored>}.
 */
const CHECK = `#!lua flags=allow-key-locking
local fence_key = KEYS[1]
local fence_arg = ARGV[1]
local function is_fence(s)
  return type(s) == 'string' and #s <= 16 and (s == '0' or string.match(s, '^[1-9]%d*$') ~= nil) and tonumber(s) < 9007199254740992
end
if not is_fence(fence_arg) then return redis.error_reply('ERR holdfast/fence: ARGV[1] is not a fence') end
local stored = redis.pcall('GET', fence_key)
if type(stored) == 'table' then return {'corrupt', 'a ' .. redis.call('TYPE', fence_key)['ok']} end
if stored then
  if not is_fence(stored) then return {'corrupt', stored} end
  if tonumber(stored) > tonumber(fence_arg) then return {'stale', stored} end
end
local function record()
  if stored ~= fence_arg then redis.call('SET', fence_key, fence_arg) end
end
`;

/** KEYS[1] fence key. Reply {'ok', previous fence or ''}. */
export const CLAIM = `${CHECK}record()
return {'ok', stored or ''}
`;

/** KEYS[2] the resource, ARGV[2] its value. */
export const SET = `${CHECK}redis.call('SET', KEYS[2], ARGV[2])
record()
return {'ok', 1}
`;

/** KEYS[2] the resource. Reply {'ok', keys removed}. The fence key stays: a late holder is still refused. */
export const DEL = `${CHECK}local removed = redis.call('DEL', KEYS[2])
record()
return {'ok', removed}
`;

/** KEYS[2] the hash, ARGV[2..] field, value, ... Reply {'ok', fields added}. */
export const HSET = `${CHECK}local added = redis.call('HSET', KEYS[2], unpack(ARGV, 2))
record()
return {'ok', added}
`;

/** KEYS[2] the counter, ARGV[2] the increment. Reply {'ok', new value}. */
export const INCRBY = `${CHECK}local value = redis.call('INCRBY', KEYS[2], ARGV[2])
record()
return {'ok', value}
`;

/**
 * The caller's script, run only when the fence holds: its body becomes a
 * function whose KEYS and ARGV are the caller's own (the fence's taken off
 * the front), locals that shadow the globals. KEYS[2..] are the caller's keys.
 */
export function userScript(body: string): string {
  return `${CHECK}local function user_script(KEYS, ARGV)
${body}
end
local result = user_script({unpack(KEYS, 2)}, {unpack(ARGV, 2)})
record()
return {'ok', result}
`;
}

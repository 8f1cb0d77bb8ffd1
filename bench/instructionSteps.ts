/**
 * The per-script rows of `npm run bench:instructions`: what Redis spends on
 * each script call the library makes (and the Worker's mutex acquire, full release and heartbeat),
 * with the hand-written minimal scripts that send the same commands with the
 * same keys and arguments as the mutex's floor.
 *
 * Each step runs over `n` names of its own: a setup (not counted) brings
 * every name to the state the step needs, then the step's one call per name
 * is counted. Names are used once per step; their fence keys exist (as in
 * a steady cycle on one name) because the setup acquired and released them.
 * Steps run in order: a release step counts the releases of the grants its
 * acquire step made.
 */
import type { Redis } from "@upstash/redis";
import { Idempotency, LockedError, Mutex, RedisStore, RwLock, Semaphore } from "../src/index";
import { mutexKeys } from "../src/kinds/mutex/keys";
import { newOwnerToken, newRequestId } from "../src/tokens";

const NS = "bench";
// Long enough to outlast a step of 1,000 calls under valgrind.
const TTL_MS = 300_000;

export interface Step {
  label: string;
  /** The floor row this row is read against (a label of FLOORS), if any. */
  floor?: string;
  /** Brings name i to the state the step needs (not counted). */
  setup(i: number): Promise<void>;
  /** The counted call for name i. */
  run(i: number): Promise<void>;
}

/** The mutex's floors: its usual grant and release as the fewest commands, no checks, no logic. */
const FLOOR_ACQUIRE = `local t = redis.call('TIME')
if redis.call('EXISTS', KEYS[1], KEYS[3], KEYS[4]) == 0 then
  local f = t[1] .. t[2]
  redis.call('SET', KEYS[2], f, 'PX', '604800000', 'GET')
  local exp = string.format('%d', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[2]))
  redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'fence', f, 'ttl', ARGV[2], 'exp', exp)
  redis.call('PEXPIREAT', KEYS[1], exp)
  return '["status","granted","fence","' .. f .. '","ttlMs","' .. ARGV[2] .. '","expiresAt","' .. exp .. '","count","1"]'
end
return 'busy'`;
const FLOOR_RELEASE = `if redis.call('HLEN', KEYS[1]) == 4 then
  local l = redis.call('HMGET', KEYS[1], 'owner', 'fence')
  if l[1] == ARGV[1] then
    redis.call('DEL', KEYS[1])
    local a = '["status","ok","released","1","count","0","fence","' .. l[2] .. '","watched","0"]'
    redis.call('PSETEX', KEYS[2], '120000', a)
    return a
  end
end
return 'lost'`;

/**
 * The floors of another data model, for the decision on it (issue 38): one
 * key per mutex, the fence and the waiter and lock-delay marks as fields of
 * the lease's hash, which outlives the lease by the fence's keep time (held
 * while exp is ahead of Redis's time), so a grant reads one key.
 */
const ONE_KEY_ACQUIRE = `local t = redis.call('TIME')
local l = redis.call('HMGET', KEYS[1], 'owner', 'exp', 'fence', 'nx', 'du')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if (not l[1] or tonumber(l[2]) <= now) and not l[4] and not l[5] then
  local f = t[1] .. t[2]
  local exp = string.format('%d', now + tonumber(ARGV[2]))
  redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'fence', f, 'ttl', ARGV[2], 'exp', exp)
  redis.call('PEXPIREAT', KEYS[1], exp + 604800000)
  return '["status","granted","fence","' .. f .. '","ttlMs","' .. ARGV[2] .. '","expiresAt","' .. exp .. '","count","1"]'
end
return 'busy'`;
const ONE_KEY_RELEASE = `local l = redis.call('HMGET', KEYS[1], 'owner', 'fence', 'exp')
if l[1] == ARGV[1] then
  redis.call('HDEL', KEYS[1], 'owner')
  local a = '["status","ok","released","1","count","0","fence","' .. l[2] .. '","watched","0"]'
  redis.call('PSETEX', KEYS[2], '120000', a)
  return a
end
return 'lost'`;

export const FLOORS = {
  acquire: "floor, 0.1's layout (four keys): mutex acquire (TIME, EXISTS, SET GET, HSET, PEXPIREAT)",
  release: "floor, 0.1's layout: mutex release (HLEN, HMGET, DEL, PSETEX; same KEYS and ARGV)",
  oneKeyAcquire: "floor, one key per mutex: acquire (TIME, HMGET, HSET, PEXPIREAT; 1 KEY)",
  oneKeyRelease: "floor, one key per mutex: release (HMGET, HDEL, PSETEX; 2 KEYS)",
};

/** The steps, over names under `prefix`; loads the floor scripts first (they run by EVALSHA, as the library's do). */
export async function instructionSteps(redis: Redis, prefix: string): Promise<Step[]> {
  const store = new RedisStore(redis);
  /** The Worker's store: its writes pass each lock's watchers key (src/service/changeNotes.ts). */
  const worker = store.notingWatchers();
  const [floorAcquire, floorRelease] = [await redis.scriptLoad(FLOOR_ACQUIRE), await redis.scriptLoad(FLOOR_RELEASE)];
  const [oneKeyAcquire, oneKeyRelease] = [await redis.scriptLoad(ONE_KEY_ACQUIRE), await redis.scriptLoad(ONE_KEY_RELEASE)];
  const name = (step: string, i: number) => `${prefix}-${step}-${i}`;
  const tokens: string[] = [];
  const mutex = (step: string, i: number) => new Mutex(store, name(step, i), { namespace: NS });
  const ref = (step: string, i: number) => ({ ns: NS, name: name(step, i) });
  /** A fresh grant of name i for step (its fence key then exists), its token kept. */
  const grant = async (step: string, i: number) => {
    tokens[i] = (await mutex(step, i).acquire({ ttlMs: TTL_MS })).token;
  };
  const cycle = async (step: string, i: number) => {
    await grant(step, i);
    await mutex(step, i).release(tokens[i]);
  };
  const floorKeys = (step: string, i: number) => {
    const lock = mutexKeys.lock(ref(step, i));
    // 0.1's four keys: the lease, its last fence, its registered waiter, its lock-delay.
    return { acquire: [lock, `${lock}:fence`, `${lock}:next`, `${lock}:delay`], release: [lock, mutexKeys.request(lock, newRequestId())] };
  };
  const floorGrant = async (step: string, i: number) => {
    tokens[i] = newOwnerToken();
    await redis.evalsha(floorAcquire, floorKeys(step, i).acquire, [tokens[i], String(TTL_MS), clock()]);
  };
  const oneKeyGrant = async (step: string, i: number) => {
    tokens[i] = newOwnerToken();
    const answer = await redis.evalsha(oneKeyAcquire, [floorKeys(step, i).acquire[0]], [tokens[i], String(TTL_MS), clock()]);
    if (answer === "busy") throw new Error("the one-key floor found its lock held");
  };
  const releaseOneKey = async (step: string, i: number) => {
    if ((await redis.evalsha(oneKeyRelease, floorKeys(step, i).release, [tokens[i]])) === "lost") throw new Error("the one-key floor lost its lock");
  };
  const idem = new Idempotency(store, { namespace: NS });
  const rw = (i: number) => new RwLock(store, name("rw", i), { namespace: NS });
  const sem = (i: number) => new Semaphore(store, name("sem", i), { namespace: NS, limit: 3 });
  return [
    { label: "mutex acquire (try-lock of a free lock)", floor: FLOORS.oneKeyAcquire, setup: (i) => cycle("a", i), run: (i) => grant("a", i) },
    {
      label: "mutex release (library: release_unwatched)",
      floor: FLOORS.oneKeyRelease,
      setup: (i) => grant("r", i),
      run: async (i) => void (await mutex("r", i).release(tokens[i])),
    },
    {
      label: "mutex acquire (Worker: its watchers key passed, absent)",
      floor: FLOORS.oneKeyAcquire,
      setup: (i) => cycle("wa", i),
      run: async (i) => {
        tokens[i] = newOwnerToken();
        await worker.mutex.acquire(ref("wa", i), { token: tokens[i], mode: "new", ttlMs: TTL_MS, requestId: newRequestId(), watch: false });
      },
    },
    {
      label: "mutex release (Worker: the full script, its watchers key passed, absent)",
      floor: FLOORS.oneKeyRelease,
      setup: (i) => grant("f", i),
      run: async (i) => void (await worker.mutex.release(ref("f", i), { token: tokens[i], requestId: newRequestId() })),
    },
    { label: "mutex heartbeat", setup: (i) => grant("h", i), run: async (i) => void (await mutex("h", i).heartbeat(tokens[i])) },
    {
      label: "mutex heartbeat (Worker: its watchers key passed, absent)",
      setup: (i) => grant("wh", i),
      run: async (i) => void (await worker.mutex.heartbeat(ref("wh", i), { token: tokens[i] })),
    },
    {
      label: "mutex acquire, busy (held by another)",
      setup: (i) => grant("b", i),
      run: async (i) => {
        const refused = await mutex("b", i)
          .acquire({ ttlMs: TTL_MS })
          .catch((err) => err);
        if (!(refused instanceof LockedError)) throw new Error("a held lock was granted again");
      },
    },
    {
      label: "rwlock write acquire",
      setup: async (i) => void (await rw(i).release((await rw(i).writeLock({ ttlMs: TTL_MS })).token)),
      run: async (i) => {
        tokens[i] = (await rw(i).writeLock({ ttlMs: TTL_MS })).token;
      },
    },
    { label: "rwlock release", setup: async () => {}, run: async (i) => void (await rw(i).release(tokens[i])) },
    {
      label: "semaphore acquire",
      setup: async (i) => void (await sem(i).release((await sem(i).acquire({ ttlMs: TTL_MS })).token)),
      run: async (i) => {
        tokens[i] = (await sem(i).acquire({ ttlMs: TTL_MS })).token;
      },
    },
    { label: "semaphore release", setup: async () => {}, run: async (i) => void (await sem(i).release(tokens[i])) },
    {
      label: "idempotency begin (a new key)",
      setup: async () => {},
      run: async (i) => {
        const begun = await idem.begin(name("id", i), { ttlMs: TTL_MS });
        if (begun.state === "started") tokens[i] = begun.token;
      },
    },
    { label: "idempotency complete", setup: async () => {}, run: async (i) => void (await idem.complete(name("id", i), tokens[i], { ok: true })) },
    {
      label: FLOORS.acquire,
      setup: (i) => cycle("fa", i),
      run: (i) => floorGrant("fa", i),
    },
    {
      label: FLOORS.release,
      setup: (i) => floorGrant("fr", i),
      run: async (i) => void (await redis.evalsha(floorRelease, floorKeys("fr", i).release, [tokens[i]])),
    },
    {
      label: FLOORS.oneKeyAcquire,
      setup: async (i) => {
        await oneKeyGrant("oa", i);
        await releaseOneKey("oa", i);
      },
      run: (i) => oneKeyGrant("oa", i),
    },
    { label: FLOORS.oneKeyRelease, setup: (i) => oneKeyGrant("or", i), run: (i) => releaseOneKey("or", i) },
  ];
}

/** The caller's clock as ScriptRunner sends it (the floor acquire takes it as the library's acquire does). */
const clock = () => String(Date.now() * 1000);

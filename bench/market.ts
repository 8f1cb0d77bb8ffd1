/**
 * Figure 6: the game market of "Redis in Action" 6.2, the workload the
 * design notes start from. Listers move an item from their inventory (a set)
 * onto the market (a sorted set: "item.seller" -> price); buyers pick a
 * listed item, check its price against their funds, and move the funds and
 * the item in one step. Done five ways, side by side, for 1 lister x 1
 * buyer, 5 x 1 and 5 x 5:
 *
 * - WATCH/MULTI/EXEC over TCP (the book's baseline; optimistic, retried when
 *   a watched key changed; it does not exist over the Upstash REST API);
 * - a coarse "market" lock with holdfast's library, the data over REST;
 * - fine-grained per-item locks with holdfast's library, and with the
 *   holdfast Worker's lock object (waiting in line), the data over REST;
 * - fine-grained per-item locks with @upstash/lock.
 *
 * Under a lock the data steps are a MULTI/EXEC over REST (/multi-exec), so a
 * lock's holder changes the market in one request.
 */
import type { Redis } from "@upstash/redis";
import { createRespClient } from "../tools/upstash-gateway/resp-client.mjs";
import { libraryLock, type Release, upstashLock, type WorkerApi } from "./clients";
import { sleep } from "./loop";
import type { Gateway } from "./stack";
import { int, ms, summarize } from "./stats";

export interface MarketShape {
  listers: number;
  buyers: number;
}

export const MARKET_SHAPES: MarketShape[] = [
  { listers: 1, buyers: 1 },
  { listers: 5, buyers: 1 },
  { listers: 5, buyers: 5 },
];

const LOCK_WAIT_MS = 10_000;
const PRICE = 10;

export interface MarketRow {
  variant: string;
  shape: string;
  seconds: number;
  listed: number;
  bought: number;
  /** WATCH aborts that made a step start over. */
  retries: number;
  /** Lock grants after which there was nothing to do (the item was sold meanwhile). */
  wasted: number;
  buyMeanMs: number;
  buyP99Ms: number;
}

/** One market's keys, apart from every other run and variant. */
function marketKeys(prefix: string) {
  return {
    market: `${prefix}:market`,
    funds: (user: string) => `${prefix}:users:${user}`,
    inventory: (user: string) => `${prefix}:inventory:${user}`,
  };
}
type Keys = ReturnType<typeof marketKeys>;

/** How one variant lists and buys. Each answers whether it did the step. */
interface Trader {
  list(seller: string, item: string): Promise<boolean>;
  /** "bought", "gone" (sold meanwhile: a wasted grant or a miss), after `retries` WATCH aborts. */
  buy(buyer: string, member: string): Promise<{ bought: boolean; retries: number; wasted: boolean }>;
  close(): void;
}

export interface MarketVariant {
  label: string;
  /** Items each lister starts with (the TCP baseline lists far more per second). */
  inventory: number;
  trader(keys: Keys, redis: Redis): Trader;
}

export function marketVariants(gw: Gateway, workers: { redis: WorkerApi }): MarketVariant[] {
  const locked = (
    label: string,
    lockOf: (keys: Keys, redis: Redis) => (name: string) => Promise<Release | null>,
    coarse: boolean,
  ): MarketVariant => ({
    label,
    inventory: 4000,
    trader: (keys, redis) => lockedTrader(keys, redis, lockOf(keys, redis), coarse),
  });
  return [
    { label: "WATCH/MULTI/EXEC (TCP)", inventory: 40_000, trader: (keys) => watchTrader(keys, gw.redisPort) },
    locked("coarse market lock, holdfast Mutex (library)", (_k, redis) => (name) => libraryLock(redis, name).acquire(LOCK_WAIT_MS), true),
    locked("per-item locks, holdfast Mutex (library)", (_k, redis) => (name) => libraryLock(redis, name).acquire(LOCK_WAIT_MS), false),
    locked("per-item locks, holdfast Worker (Redis store)", () => (name) => workers.redis.acquire(name, LOCK_WAIT_MS), false),
    locked("per-item locks, @upstash/lock", (_k, redis) => (name) => upstashLock(redis, name, { attempts: 200, delay: 50 }).acquire(), false),
  ];
}

/** The book's optimistic version: WATCH the keys, read, MULTI ... EXEC; a nil EXEC means start over. */
function watchTrader(keys: Keys, port: number): Trader {
  const conn = createRespClient({ port });
  const one = async (cmd: string[]) => (await conn.exec([cmd]))[0];
  return {
    async list(seller, item) {
      for (;;) {
        await one(["WATCH", keys.inventory(seller)]);
        if ((await one(["SISMEMBER", keys.inventory(seller), item])) !== 1) {
          await one(["UNWATCH"]);
          return false;
        }
        const replies = await conn.exec([
          ["MULTI"],
          ["ZADD", keys.market, String(PRICE), `${item}.${seller}`],
          ["SREM", keys.inventory(seller), item],
          ["EXEC"],
        ]);
        if (replies[replies.length - 1] !== null) return true;
      }
    },
    async buy(buyer, member) {
      let retries = 0;
      const [item, seller] = splitMember(member);
      for (;;) {
        await one(["WATCH", keys.market, keys.funds(buyer)]);
        const [price, funds] = await conn.exec([
          ["ZSCORE", keys.market, member],
          ["HGET", keys.funds(buyer), "funds"],
        ]);
        if (price === null || Number(String(funds)) < Number(String(price))) {
          await one(["UNWATCH"]);
          return { bought: false, retries, wasted: false };
        }
        const replies = await conn.exec([
          ["MULTI"],
          ["HINCRBY", keys.funds(seller), "funds", String(price)],
          ["HINCRBY", keys.funds(buyer), "funds", `-${String(price)}`],
          ["SADD", keys.inventory(buyer), item],
          ["ZREM", keys.market, member],
          ["EXEC"],
        ]);
        if (replies[replies.length - 1] !== null) return { bought: true, retries, wasted: false };
        retries++;
      }
    },
    close: () => conn.close(),
  };
}

/** The locked versions: the lock (one for the market, or one per item), then one MULTI/EXEC over REST. */
function lockedTrader(keys: Keys, redis: Redis, lock: (name: string) => Promise<Release | null>, coarse: boolean): Trader {
  const lockName = (member: string) => (coarse ? `${keys.market}-lock` : `${keys.market}-item-${member}`);
  const holding = async <T>(name: string, fn: () => Promise<T>): Promise<T | undefined> => {
    const release = await lock(name.replace(/[^A-Za-z0-9._:@+=-]/g, "_"));
    if (!release) return undefined; // not granted within the wait: counted as not done
    try {
      return await fn();
    } finally {
      await release();
    }
  };
  return {
    async list(seller, item) {
      const member = `${item}.${seller}`;
      const done = await holding(lockName(member), async () => {
        if (!(await redis.sismember(keys.inventory(seller), item))) return false;
        await redis.multi().zadd(keys.market, { score: PRICE, member }).srem(keys.inventory(seller), item).exec();
        return true;
      });
      return done === true;
    },
    async buy(buyer, member) {
      const [item, seller] = splitMember(member);
      const outcome = await holding(lockName(member), async () => {
        const [price, funds] = await redis.multi().zscore(keys.market, member).hget(keys.funds(buyer), "funds").exec();
        if (price === null || Number(funds) < Number(price)) return "gone" as const;
        await redis
          .multi()
          .hincrby(keys.funds(seller), "funds", Number(price))
          .hincrby(keys.funds(buyer), "funds", -Number(price))
          .sadd(keys.inventory(buyer), item)
          .zrem(keys.market, member)
          .exec();
        return "bought" as const;
      });
      return { bought: outcome === "bought", retries: 0, wasted: outcome === "gone" };
    },
    close: () => {},
  };
}

function splitMember(member: string): [item: string, seller: string] {
  const dot = member.lastIndexOf(".");
  return [member.slice(0, dot), member.slice(dot + 1)];
}

/** Runs one variant on one shape for `seconds`, on a fresh market. */
export async function measureMarket(
  variant: MarketVariant,
  shape: MarketShape,
  prefix: string,
  redis: Redis,
  redisPort: number,
  seconds: number,
): Promise<MarketRow> {
  const keys = marketKeys(prefix);
  const sellers = Array.from({ length: shape.listers }, (_, i) => `s${i}`);
  const buyers = Array.from({ length: shape.buyers }, (_, i) => `b${i}`);
  // Setup straight over TCP: inventories and funds, not part of the figures.
  const setup = createRespClient({ port: redisPort });
  for (const s of sellers) {
    const items = Array.from({ length: variant.inventory }, (_, i) => `item${i}`);
    await setup.exec([
      ["SADD", keys.inventory(s), ...items],
      ["HSET", keys.funds(s), "funds", "0"],
    ]);
  }
  for (const b of buyers) await setup.exec([["HSET", keys.funds(b), "funds", String(1e12)]]);

  const traders: Trader[] = [];
  const trader = () => {
    const t = variant.trader(keys, redis);
    traders.push(t);
    return t;
  };
  const row: MarketRow = {
    variant: variant.label,
    shape: `${shape.listers} x ${shape.buyers}`,
    seconds,
    listed: 0,
    bought: 0,
    retries: 0,
    wasted: 0,
    buyMeanMs: NaN,
    buyP99Ms: NaN,
  };
  const buyLatencies: number[] = [];
  const end = Date.now() + seconds * 1000;
  const listers = sellers.map(async (seller) => {
    const t = trader();
    for (let i = 0; i < variant.inventory && Date.now() < end; i++) if (await t.list(seller, `item${i}`)) row.listed++;
  });
  const buyerLoops = buyers.map(async (buyer) => {
    const t = trader();
    // Picking an item is a read outside any lock or WATCH, as a player browsing the market.
    const pick = createRespClient({ port: redisPort });
    try {
      while (Date.now() < end) {
        const member = await pick.exec([["ZRANDMEMBER", keys.market]]).then((r) => r[0]);
        if (member === null) {
          await sleep(1);
          continue;
        }
        const started = performance.now();
        const r = await t.buy(buyer, String(member));
        row.retries += r.retries;
        if (r.wasted) row.wasted++;
        if (r.bought) {
          row.bought++;
          buyLatencies.push(performance.now() - started);
        }
      }
    } finally {
      pick.close();
    }
  });
  await Promise.all([...listers, ...buyerLoops]);
  for (const t of traders) t.close();
  // The market's books balance: every item bought was paid for, once.
  const [sellerFunds] = await setup.exec([
    [
      "EVAL",
      "local s=0 for _,k in ipairs(KEYS) do s=s+tonumber(redis.call('HGET',k,'funds') or '0') end return s",
      String(sellers.length),
      ...sellers.map(keys.funds),
    ],
  ]);
  setup.close();
  if (Number(sellerFunds) !== row.bought * PRICE) {
    throw new Error(
      `${variant.label} ${row.shape}: sellers hold ${sellerFunds}, but ${row.bought} items were bought at ${PRICE}: a sale happened twice or not at all`,
    );
  }
  const s = summarize(buyLatencies);
  row.buyMeanMs = s.mean;
  row.buyP99Ms = s.p99;
  return row;
}

export const MARKET_HEADER = ["variant", "shape", "listed", "bought", "retries", "wasted grants", "buy avg ms", "buy p99 ms", "ops/60 s"];

export function marketTableRows(rows: MarketRow[]): string[][] {
  return rows.map((r) => [
    r.variant,
    r.shape,
    int(r.listed),
    int(r.bought),
    int(r.retries),
    int(r.wasted),
    ms(r.buyMeanMs),
    ms(r.buyP99Ms),
    int(((r.listed + r.bought) / r.seconds) * 60),
  ]);
}

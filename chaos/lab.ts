/**
 * Everything the faults act on: three redis-servers (A is the single Redis
 * store; A, B and C the quorum), each behind a gateway and a fault proxy, and
 * the Worker served by workerd twice (Redis store on A, Durable store), each
 * restartable with its Durable Object storage kept on disk. Beside them, what
 * no fault touches: the guarded resources (resources.ts), on a fourth
 * redis-server of their own and in PGlite.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Redis } from "@upstash/redis";
import { QuorumStore, RedisStore } from "../src/index";
import { startWorkerServer, type WorkerServer } from "../tools/serve-worker/serve.mjs";
import { type IdempotencyClient, libraryIdempotency, workerIdempotency } from "./idempotencyClients";
import { type LockClient, libraryClient, workerClient } from "./lockClients";
import { type RedisNode, startRedisNode } from "./redisNode";
import { type Resources, startResources } from "./resources";

export const API_KEY = "chaos-suite-key-0123456789";
/** The flood rows' other namespace ("flood"), which floods while the suite's ("chaos") is timed (flood.ts): one flooder. */
export const FLOOD_API_KEY = "chaos-flood-key-0123456789";
/** The flood rows' ten flooders, a namespace ("flood10") of their own: fresh to the flood penalty the one flooder earned. */
export const FLOOD_TEN_API_KEY = "chaos-flood-ten-key-0123456789";
/** The flood rows' 100 sockets at once, a namespace ("flood100") of their own, its user and admin keys in turn. */
export const FLOOD_HUNDRED_API_KEYS = ["chaos-flood-100-key-0123456789", "chaos-flood-100-admin-0123456789"];
/** The flood rows' handshake churn, a namespace ("churn") of its own. */
export const CHURN_API_KEY = "chaos-churn-key-0123456789";
/** The lab Workers' API_KEYS: the suite's namespace and the flood rows' (flood.ts). */
export const CHAOS_API_KEYS = [
  `chaos=${API_KEY}`,
  `flood=${FLOOD_API_KEY}`,
  `flood10=${FLOOD_TEN_API_KEY}`,
  `flood100=${FLOOD_HUNDRED_API_KEYS[0]}`,
  `flood100:admin=${FLOOD_HUNDRED_API_KEYS[1]}`,
  `churn=${CHURN_API_KEY}`,
].join(",");
/** The Redis store's and each quorum database's bound per call (the flow row's library client's too). */
export const STORE_TIMEOUT_MS = 1000;

export type TargetName = "Redis, library" | "Redis, Worker" | "Durable, Worker" | "quorum of 3, library";

interface RestartableWorker {
  readonly url: string;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export interface Lab {
  nodes: RedisNode[];
  /** The resources the lock guards, on a redis-server that is not in `nodes` (no fault reaches it). */
  resources: Resources;
  workers: { redis: RestartableWorker; durable: RestartableWorker };
  client(target: TargetName): LockClient;
  /** Idempotency keys on the target's store; none on the quorum (mutex only). */
  idempotency(target: TargetName): IdempotencyClient | undefined;
  /** Every node up and answering, clocks true, proxies passing: the state each run starts from. */
  heal(): Promise<void>;
  close(): Promise<void>;
}

export const upstash = (node: RedisNode) => new Redis({ url: node.url, token: node.token, retry: { retries: 2, backoff: (n) => 25 * 2 ** n } });

export async function startLab(): Promise<Lab> {
  const [resourceNode, ...nodes] = await Promise.all(["resource", "a", "b", "c"].map((l) => startRedisNode(l)));
  const resources = await startResources(resourceNode);
  const vars = { API_KEYS: CHAOS_API_KEYS, STORE_TIMEOUT_MS: String(STORE_TIMEOUT_MS) };
  const [redis, durable] = await Promise.all([
    restartableWorker({ ...vars, UPSTASH_REDIS_REST_URL: nodes[0].url, UPSTASH_REDIS_REST_TOKEN: nodes[0].token }),
    restartableWorker(vars),
  ]);
  const clients: Record<TargetName, () => LockClient> = {
    "Redis, library": () => libraryClient(new RedisStore(upstash(nodes[0]), { timeoutMs: STORE_TIMEOUT_MS })),
    "quorum of 3, library": () => libraryClient(new QuorumStore(nodes.map(upstash), { timeoutMs: STORE_TIMEOUT_MS / 2 })),
    "Redis, Worker": () => workerClient(() => redis.url, API_KEY),
    "Durable, Worker": () => workerClient(() => durable.url, API_KEY),
  };
  const idempotency: Record<TargetName, () => IdempotencyClient | undefined> = {
    "Redis, library": () => libraryIdempotency(new RedisStore(upstash(nodes[0]), { timeoutMs: STORE_TIMEOUT_MS })),
    "quorum of 3, library": () => undefined,
    "Redis, Worker": () => workerIdempotency(() => redis.url, API_KEY),
    "Durable, Worker": () => workerIdempotency(() => durable.url, API_KEY),
  };
  return {
    nodes,
    resources,
    workers: { redis, durable },
    client: (target) => clients[target](),
    idempotency: (target) => idempotency[target](),
    async heal() {
      for (const n of nodes) {
        n.resume();
        n.shiftClock(0);
        n.proxy.mode = { kind: "pass" };
        if ((await n.command("PING").catch(() => undefined)) !== "PONG") await n.start();
      }
    },
    async close() {
      await Promise.all([redis.stop(), durable.stop()]);
      await resources.close();
      await Promise.all([resourceNode, ...nodes].map((n) => n.close()));
    },
  };
}

async function restartableWorker(vars: Record<string, string>): Promise<RestartableWorker> {
  const persistDir = fs.mkdtempSync(path.join(os.tmpdir(), "holdfast-chaos-worker-"));
  let server: WorkerServer = await startWorkerServer({ vars, persistDir });
  return {
    get url() {
      return server.url;
    },
    async restart() {
      await server.stop();
      server = await startWorkerServer({ vars, persistDir });
    },
    async stop() {
      await server.stop();
      fs.rmSync(persistDir, { recursive: true, force: true });
    },
  };
}

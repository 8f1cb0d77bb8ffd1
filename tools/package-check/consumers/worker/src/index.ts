// A Worker consumer of the packed package: the Worker way to build the
// Upstash client (@upstash/redis/cloudflare, from env, no process.env), then
// takes and releases a lock on every request, as a library and through the
// client (holdfast/client) against the service.
import { Redis } from "@upstash/redis/cloudflare";
import { Mutex } from "holdfast";
import { RedisFence, StaleFenceError } from "holdfast/fence";
import { HoldfastClient } from "holdfast/client";

interface Env {
  UPSTASH_REDIS_REST_URL: string;
  UPSTASH_REDIS_REST_TOKEN: string;
  HOLDFAST_URL: string;
  HOLDFAST_API_KEY: string;
}

export default {
  async fetch(_request: Request, env: Env): Promise<Response> {
    const redis = Redis.fromEnv(env);
    const mutex = new Mutex(redis, `worker-${Date.now()}`);
    const grant = await mutex.acquire({ ttlMs: 5000 });
    const released = await mutex.release(grant.token);
    const client = new HoldfastClient({ baseUrl: env.HOLDFAST_URL, apiKey: env.HOLDFAST_API_KEY });
    const fenced = new RedisFence(redis);
    const resource = `worker-fenced-${Date.now()}`;
    // Claim on grant: the resource hears the lease's fence before the work; an older fence is then refused.
    const clientFence = await client.withLock(
      `worker-client-${Date.now()}`,
      { ttlMs: 5000, claim: { store: fenced, resources: [resource] } },
      (lease) => lease.fence,
    );
    const stale = await fenced.set(resource, clientFence - 1, "older").catch((err: unknown) => err);
    const staleRefused = stale instanceof StaleFenceError;
    return Response.json({ consumer: "worker", fence: grant.fence, released: released.released, clientFence, staleRefused });
  },
};

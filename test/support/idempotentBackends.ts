import { Redis } from "@upstash/redis";
import { afterAll, beforeAll, inject } from "vitest";
import { HoldfastClient } from "../../src/client/index";
import { LOCAL_API_KEY } from "../../tools/dev/local.mjs";
import type { WorkerServer } from "../../tools/serve-worker/serve.mjs";
import { startLocalService } from "./workerServers";

/**
 * The two places `idempotent(handler)` keeps keys, for a test file's shared cases: the test stack's
 * Redis through @upstash/redis, and a holdfast service as `npm start` serves it (over the same Redis),
 * started before the file's tests and stopped after them. `service()` is that service, once started.
 */
export function idempotentBackends() {
  let service: WorkerServer | undefined;
  beforeAll(async () => {
    service = await startLocalService();
  });
  afterAll(() => service?.stop());
  const started = (): WorkerServer => {
    if (!service) throw new Error("the holdfast service is started before the tests run");
    return service;
  };
  return {
    service: started,
    backends: [
      { name: "redis", keys: () => ({ redis: new Redis({ url: inject("upstashUrl"), token: inject("upstashToken") }) }) },
      { name: "a holdfast service", keys: () => ({ client: new HoldfastClient({ baseUrl: started().url, apiKey: LOCAL_API_KEY }) }) },
    ],
  };
}

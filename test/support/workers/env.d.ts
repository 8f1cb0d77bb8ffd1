import type { Env as HoldfastEnv } from "../../../src/env";

declare global {
  namespace Cloudflare {
    interface Env extends HoldfastEnv {
      TEST_UPSTASH_URL: string;
      TEST_UPSTASH_TOKEN: string;
      TEST_STACK_CONTROL_URL: string;
      TEST_RECEIVERS_URL: string;
      /** test/fence/d1.workers.test.ts' database (vitest.config.ts). */
      FENCE_DB: D1Database;
    }
  }
}

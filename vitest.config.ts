import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    globalSetup: ["./test/setup/global-stack.ts"],
    projects: [
      {
        test: { name: "node", include: ["test/node/**/*.test.ts"], environment: "node" },
      },
      {
        plugins: [
          cloudflareTest(({ inject }) => ({
            wrangler: { configPath: "./wrangler.toml" },
            miniflare: { bindings: { UPSTASH_REDIS_REST_URL: inject("upstashUrl") } },
          })),
        ],
        test: { name: "workers", include: ["test/workers/**/*.test.ts"] },
      },
    ],
  },
});

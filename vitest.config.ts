import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { configDefaults, defineConfig } from "vitest/config";
import { LongestFirst } from "./test/setup/longestFirst.js";

/**
 * Two projects: Node (the gateway, the library over @upstash/redis, the
 * local stack) and workerd (the Worker and its Durable Objects). The global
 * setup starts redis-server and the Upstash gateway on free ports once for
 * both, and stops them after.
 *
 * Tests are laid out by subject, as src/ is (test/lockObject/line/ for
 * src/lockObject/line/, test/kinds/<kind>/ for src/kinds/<kind>/, ...); the
 * runtime is said by the file name: `*.workers.test.ts` runs in workerd,
 * every other `*.test.ts` in Node.
 */
const WORKERS_TESTS = "test/**/*.workers.test.ts";

// tenant-audit is the audit paging case's own namespace (test/conformance/operators.conformance.ts): other files force-release in tenant-a.
export const TEST_API_KEYS =
  "tenant-a=key-aaaaaaaa,tenant-b=key-bbbbbbbb,tenant-a:admin:ops-admin=key-admin-aaaa,tenant-audit:admin:audit-admin=key-audit-admin";

/**
 * What tests that break things on purpose make the Worker log: a lock object
 * made unreachable by a test fake, a key that holds what our scripts did not
 * write, a fence planted past 2^53. Anything else the Worker logs is shown.
 */
const EXPECTED_LOGS = [
  /\(test fake\)/,
  /WRONGTYPE Operation against a key holding the wrong kind of value/,
  /the stored mutex record is not one this code wrote/,
  /has no next fence below 2\^53/,
  // The store outages that tests cause on purpose: the details of each 503 are logged by its id.
  /^store unavailable err_|^health: the store does not answer/,
  // The broken API_KEYS that the hostile-input cases configure on purpose (the Worker's settings line, once per value, by position).
  /^holdfast settings: the service has no usable API keys \(API_KEYS (entry|entries|is not set)[^|]*$/,
];

/**
 * Time allowed to a test and to a hook that has no budget of its own. What a
 * test asserts is behaviour; how fast it gets there is the bench's business
 * (npm run bench). On a small shared CI runner (two cores, other work beside
 * the suite: `npm run ci:busy`) a step takes two to three times as long as on
 * a quiet machine, and a hook that starts a server, PGlite or a built package
 * took over 10 s there (Vitest's default hook budget), so both budgets leave
 * that room. A test that needs more sets its own; one that sets less says why.
 */
const TEST_TIMEOUT_MS = 60_000;
const HOOK_TIMEOUT_MS = 60_000;

/**
 * Test files run three at a time (both projects together, longest first);
 * `TEST_FILES_AT_ONCE=1 npm test` runs one at a time. Most of a file's time
 * is spent waiting on real time (a lease to lapse, a pickup time, a socket's
 * idle limit) rather than on a core, so three files keep a 2-core machine
 * busy: 389-440 s for 1,537 cases on a quiet 2-core machine (2026-11-29),
 * against 989 s one at a time. Cases that failed at three beside other work
 * wait on their conditions rather than on a quick round trip; at three with
 * four other agents' full suites on the same 2 cores (load 10-13) a run
 * still lost 2-6 cases of 1,412 (store deadlines of 600 ms to 2 s), which
 * one at a time does not: on a machine that busy, run one at a time. Each
 * file has its own process or workerd, and files share only the run's
 * Redis, under names no other test uses; a case that breaks its store
 * (stops, pauses or fills Redis) does it on a stack of its own, and a case
 * that stores a broken record in a namespace another file lists removes it.
 */
const FILES_AT_ONCE = Number(process.env.TEST_FILES_AT_ONCE) || 3;

export default defineConfig({
  resolve: { alias: { holdfast: new URL("./src/index.ts", import.meta.url).pathname } },
  test: {
    globalSetup: ["./test/setup/global-stack.ts"],
    maxWorkers: FILES_AT_ONCE,
    sequence: { sequencer: LongestFirst },
    onConsoleLog: (log) => !EXPECTED_LOGS.some((re) => re.test(log)),
    projects: [
      {
        extends: true,
        test: {
          name: "node",
          include: ["test/**/*.test.ts"],
          exclude: [...configDefaults.exclude, WORKERS_TESTS],
          environment: "node",
          testTimeout: TEST_TIMEOUT_MS,
          hookTimeout: HOOK_TIMEOUT_MS,
        },
      },
      {
        extends: true,
        plugins: [
          cloudflareTest(({ inject }) => ({
            wrangler: { configPath: "./wrangler.toml" },
            miniflare: {
              bindings: {
                API_KEYS: TEST_API_KEYS,
                WEBHOOK_SECRET: "test-webhook-secret",
                // The test receivers listen on 127.0.0.1 over http; tenant-a may also notify hooks.tenant-a.example.
                ONEXPIRE_HOSTS: "*=127.0.0.1,tenant-a=hooks.tenant-a.example|*.hooks.example",
                ONEXPIRE_ALLOW_HTTP_LOCALHOST: "1",
                // No request budgets by default (the suite's bursts would spend them); the rate-limit
                // cases pick a tier for their own env.
                RATE_LIMIT_TIERS: "*=off",
                // The lock objects' own configuration: the shared stack. A test's
                // Worker env picks the store per request (envFor in test/support/workers/api.ts).
                UPSTASH_REDIS_REST_URL: inject("upstashUrl"),
                UPSTASH_REDIS_REST_TOKEN: inject("upstashToken"),
                TEST_UPSTASH_URL: inject("upstashUrl"),
                TEST_UPSTASH_TOKEN: inject("upstashToken"),
                TEST_STACK_CONTROL_URL: inject("stackControlUrl"),
                TEST_RECEIVERS_URL: inject("receiversUrl"),
              },
              // A D1 database for the SQL fence helpers' tests (test/fence/d1.workers.test.ts); the Worker has none.
              d1Databases: ["FENCE_DB"],
            },
          })),
        ],
        test: { name: "workers", include: [WORKERS_TESTS], testTimeout: TEST_TIMEOUT_MS, hookTimeout: HOOK_TIMEOUT_MS },
      },
    ],
  },
});

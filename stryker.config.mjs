// StrykerJS, run by `npm run mutate` (tools/mutate.mjs picks the files to mutate; CONTRIBUTING.md,
// "Mutation testing"). Both Vitest projects run: code the workerd pool runs (the Worker and its
// Durable Objects, @cloudflare/vitest-plugin) is mutated and switched on like Node code. What it
// cannot reach: a test that serves the Worker in a workerd process of its own (tools/serve-worker,
// the Node tests over real TCP) runs the mutated bundle with no mutant switched on, so it kills none;
// and lua/ is not JavaScript: a script's mutations are tried by hand.
export default {
  testRunner: "vitest",
  plugins: ["@stryker-mutator/vitest-runner"],
  // Related mode: only the test files that import a mutated file (through the module graph) run.
  vitest: { configFile: "vitest.config.ts", related: true },
  coverageAnalysis: "perTest",
  // CPU heavy, and the suite's own servers (redis, the gateway, workerd) run beside it: one runner.
  concurrency: 1,
  // A mutant's run may take this long beyond its tests' own time before it counts as a timeout (a busy machine).
  timeoutMS: 10_000,
  reporters: ["clear-text", "progress", "html", "json"],
  htmlReporter: { fileName: "reports/mutation/mutation.html" },
  jsonReporter: { fileName: "reports/mutation/mutation.json" },
  // Not copied to the sandbox: build and run output.
  ignorePatterns: ["/dist", "/bench/results", "/chaos/results", "/test-results", "/.wrangler", "/.holdfast", "/examples/*/node_modules"],
  tempDirName: ".stryker-tmp",
  cleanTempDir: "always",
  // Reported, never failing the run: the score is read, not gated.
  thresholds: { high: 80, low: 60, break: null },
};

// What the samples of README.md and docs/ leave to the reader, declared so the samples type-check as
// written (test/docs/readmeSamples.test.ts); fixtures.mjs defines them when they run.
// A .ts module, not a .d.ts: the check skips declaration files (skipLibCheck), and
// these declarations are ours, so they are checked with the samples.
export {};

declare global {
  const id: string;
  function buildReport(...args: unknown[]): Promise<unknown>;
  function renderPdf(...args: unknown[]): Promise<unknown>;
  function writeReport(options: { fence: number }): Promise<void>;
  function sendInvoice(options: { fence: number }): Promise<void>;
  function readCatalog(): Promise<unknown>;
  function rebuildCatalog(fence: number): Promise<unknown>;
  function creditAccount(event: unknown): Promise<void>;
  function markStale(namespace: string, name: string, fence: number, holder: string | undefined): Promise<void>;
  const queue: { send(body: unknown): Promise<void> };
  // A queue message's body is whatever was sent.
  const message: { body: any };
  const app: import("hono").Hono;
  const env: { HOLDFAST_NOTIFY_KEY: string };
  // docs/idempotency.md
  function fulfil(event: unknown): Promise<void>;
  function processEvent(event: unknown): Promise<void>;
  // docs/fencing.md's fragments: what the page's earlier steps gave them.
  const redis: import("@upstash/redis").Redis;
  const client: import("holdfast/client").HoldfastClient;
  const lease: import("holdfast/client").Lease;
  const fence: number;
  const body: string;
  const RedisFence: typeof import("holdfast/fence").RedisFence;
}

// What README.md's samples leave to the reader, declared so the samples type-check as
// written (test/node/readme-samples.test.ts); fixtures.mjs defines them when they run.
declare const id: string;
declare function buildReport(...args: unknown[]): Promise<unknown>;
declare function renderPdf(...args: unknown[]): Promise<unknown>;
declare function writeReport(options: { fence: number }): Promise<void>;
declare function sendInvoice(options: { fence: number }): Promise<void>;
declare function readCatalog(): Promise<unknown>;
declare function rebuildCatalog(fence: number): Promise<unknown>;
declare function creditAccount(event: unknown): Promise<void>;
declare function markStale(namespace: string, name: string, fence: number, holder: string | undefined): Promise<void>;
declare const queue: { send(body: unknown): Promise<void> };
// A queue message's body is whatever was sent.
declare const message: { body: any };
declare const app: import("hono").Hono;
declare const env: { HOLDFAST_NOTIFY_KEY: string };

// One shared local stack (redis-server + Upstash REST gateway) for the whole test run, plus
// the control server that lets tests (including ones inside workerd) make disposable stacks,
// and real webhook receivers for expiry notifications.
import { execFileSync } from "node:child_process";
import type { TestProject } from "vitest/node";
import { startLocalStack, startStackControl } from "../../tools/local-stack/stack.mjs";
import { startWebhookReceivers } from "../../tools/local-stack/webhook-receivers.mjs";
import { quietExpectedRuntimeLogs } from "./quietRuntimeLogs.js";

export default async function setup(project: TestProject) {
  // The scripts and the OpenAPI document are made from lua/ and the routes on every run, not only when missing:
  // `npx vitest run <file>` after an edit to lua/ must run the edited script, never a stale copy
  // (test/tools/scriptsCurrent.test.ts). The generator writes a file only where its text changed (about 1.4 s).
  execFileSync(process.execPath, ["tools/generate.mjs"], { stdio: "inherit" });
  const loud = quietExpectedRuntimeLogs();
  const stack = await startLocalStack();
  const control = await startStackControl().catch(async (err) => {
    await stack.stop();
    throw err;
  });
  const receivers = await startWebhookReceivers();
  project.provide("upstashUrl", stack.url);
  project.provide("upstashToken", stack.token);
  project.provide("stackControlUrl", control.url);
  project.provide("receiversUrl", receivers.url);
  return async () => {
    await receivers.close();
    await control.close();
    await stack.stop();
    loud();
  };
}

declare module "vitest" {
  export interface ProvidedContext {
    upstashUrl: string;
    upstashToken: string;
    stackControlUrl: string;
    receiversUrl: string;
  }
}

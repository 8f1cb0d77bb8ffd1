// One shared local stack (redis-server + Upstash REST gateway) for the whole test run, plus
// the control server that lets tests (including ones inside workerd) make disposable stacks,
// and real webhook receivers for expiry notifications.
import { execFileSync } from "node:child_process";
import type { TestProject } from "vitest/node";
import { startStackControl } from "../../tools/local-stack/stack.mjs";
import { startLocalStackProcess } from "../../tools/local-stack/stackProcess.mjs";
import { startBundleServer } from "../../tools/serve-worker/sharedBundle.mjs";
import { startWebhookReceivers } from "../../tools/local-stack/webhook-receivers.mjs";
import { quietExpectedRuntimeLogs } from "./quietRuntimeLogs.js";

export default async function setup(project: TestProject) {
  // The scripts and the OpenAPI document are made from lua/ and the routes on every run, not only when missing:
  // `npx vitest run <file>` after an edit to lua/ must run the edited script, never a stale copy
  // (test/tools/scriptsCurrent.test.ts). The generator writes a file only where its text changed (about 1.4 s).
  execFileSync(process.execPath, ["tools/generate.mjs"], { stdio: "inherit" });
  const loud = quietExpectedRuntimeLogs();
  // In a process of its own: this one stalls for seconds while test files run side by side (stackProcess.mjs).
  const stack = await startLocalStackProcess();
  const control = await startStackControl().catch(async (err) => {
    await stack.stop();
    throw err;
  });
  const receivers = await startWebhookReceivers();
  // The Worker as the Node tests serve it (tools/serve-worker/serve.mjs), bundled once for the run, when first
  // asked, not once per test file's process; the test processes inherit this variable.
  const bundles = await startBundleServer();
  process.env.HOLDFAST_WORKER_BUNDLE_URL = bundles.url;
  project.provide("upstashUrl", stack.url);
  project.provide("upstashToken", stack.token);
  project.provide("stackControlUrl", control.url);
  project.provide("receiversUrl", receivers.url);
  return async () => {
    await bundles.close();
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

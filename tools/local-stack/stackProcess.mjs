// The local stack (stack.mjs) in a process of its own, for the test run's shared stack. The run's main
// process (Vitest's: it transforms modules and drives the workerd pool) stalls for whole seconds when
// test files run side by side, and a gateway living there answered Redis calls that late, past the
// tests' store deadlines (0.6 to 2 s). Forked with an IPC channel; it stops when told, or when the
// process that started it is gone.
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { startLocalStack } from "./stack.mjs";

const SELF = fileURLToPath(import.meta.url);

/**
 * Starts redis-server and the Upstash gateway in a child process.
 * @returns {Promise<{ url: string, token: string, stop: () => Promise<void> }>}  url, token: UPSTASH_REDIS_REST_URL and _TOKEN
 */
export function startLocalStackProcess() {
  const child = fork(SELF, [], { execArgv: [], stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  return new Promise((resolve, reject) => {
    child.once("exit", (code, signal) => reject(new Error(`the local stack's process exited (${code ?? signal}) before it was up`)));
    child.once("message", (/** @type {{ url?: string, token?: string, error?: string }} */ m) => {
      if (m.error !== undefined || m.url === undefined || m.token === undefined) return reject(new Error(m.error ?? "no URL from the local stack"));
      resolve({
        url: m.url,
        token: m.token,
        async stop() {
          if (child.connected) child.send("stop");
          await exited;
        },
      });
    });
  });
}

if (process.argv[1] === SELF && process.send) {
  const send = process.send.bind(process);
  try {
    const stack = await startLocalStack();
    let stopping = false;
    const stop = () => {
      if (stopping) return;
      stopping = true;
      void stack.stop().finally(() => process.exit(0));
    };
    process.on("message", (m) => m === "stop" && stop());
    process.on("disconnect", stop);
    send({ url: stack.url, token: stack.token });
  } catch (err) {
    send({ error: String(/** @type {Error} */ (err)?.stack ?? err) }, () => process.exit(1));
  }
}

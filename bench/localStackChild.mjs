// Runs the local stack (redis-server + Upstash REST gateway) in its own
// process, so the gateway does not share an event loop with the bench's
// clients. Prints one JSON line {url, token, redisPort} when ready; stops
// when its stdin closes (the bench ended or died) or on SIGTERM/SIGINT.
// The gateway runs scripts as Upstash does but skips its key-rule check (an
// ACL command before each script call, a test instrument Upstash does not pay).
import { startLocalStack } from "../tools/local-stack/stack.mjs";

const stack = await startLocalStack({ gateway: { keyRule: "off" } });
let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  try {
    await stack.stop();
  } finally {
    process.exit(0);
  }
}
process.stdin.on("end", stop);
process.stdin.on("close", stop);
process.stdin.resume();
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
process.stdout.write(`${JSON.stringify({ url: stack.url, token: stack.token, redisPort: stack.redis.port })}\n`);

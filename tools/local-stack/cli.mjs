#!/usr/bin/env node
// `npm run stack`: a local redis-server behind the Upstash REST gateway, for
// the library or any Upstash client, until Ctrl-C. Prints the two variables
// to copy; `--token <t>` fixes the token (default: random).
import { startLocalStack } from "./stack.mjs";

const i = process.argv.indexOf("--token");
const token = i > 0 ? process.argv[i + 1] : undefined;
const stack = await startLocalStack(token ? { token } : {});
console.log(`redis-server on 127.0.0.1:${stack.redis.port}, Upstash REST gateway at ${stack.url}`);
console.log(`export UPSTASH_REDIS_REST_URL=${stack.url} UPSTASH_REDIS_REST_TOKEN=${stack.token}`);
console.log("Ctrl-C stops both.");
for (const sig of ["SIGINT", "SIGTERM"]) {
  process.once(sig, () => void stack.stop().finally(() => process.exit(0)));
}

// The operators' conformance suite on the Redis store (test/conformance/index.ts).
import { runConformance } from "./index.js";

runConformance("redis", "operators");

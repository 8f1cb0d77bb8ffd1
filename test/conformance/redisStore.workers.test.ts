// The conformance suites on the Redis store, all but the operators' (test/conformance/index.ts).
import { runConformance } from "./index.js";

runConformance("redis", "locks");

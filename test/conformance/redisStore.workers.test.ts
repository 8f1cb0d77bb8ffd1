// The conformance suites on the Redis store, all but the operators' (test/conformance/index.ts).
import { describe } from "vitest";
import { conformanceSuites } from "./index.js";

describe("redis store", () => conformanceSuites("redis", "locks"));

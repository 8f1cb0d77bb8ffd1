// The operators' conformance suite on the Redis store (test/conformance/index.ts).
import { describe } from "vitest";
import { conformanceSuites } from "./index.js";

describe("redis store", () => conformanceSuites("redis", "operators"));

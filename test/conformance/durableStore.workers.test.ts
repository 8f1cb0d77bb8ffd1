// The conformance suites on the Durable store, all but the operators' (test/conformance/index.ts).
import { describe } from "vitest";
import { conformanceSuites } from "./index.js";

describe("durable store", () => conformanceSuites("durable", "locks"));

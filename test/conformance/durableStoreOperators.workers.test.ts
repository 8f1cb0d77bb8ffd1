// The operators' conformance suite on the Durable store (test/conformance/index.ts).
import { describe } from "vitest";
import { conformanceSuites } from "./index.js";

describe("durable store", () => conformanceSuites("durable", "operators"));

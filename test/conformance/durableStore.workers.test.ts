// The conformance suites on the Durable store, all but the operators' (test/conformance/index.ts).
import { runConformance } from "./index.js";

runConformance("durable", "locks");

// The operators' conformance suite on the Durable store (test/conformance/index.ts).
import { runConformance } from "./index.js";

runConformance("durable", "operators");

import { describe } from "vitest";
import { CONFORMANCE_SUITES } from "./index.js";

// One suite, both stores: the way Hono runs one router suite against every router.
for (const kind of ["redis", "durable"] as const) {
  describe(`${kind} store`, () => {
    for (const [name, cases] of CONFORMANCE_SUITES) describe(name, () => cases(kind));
  });
}

import { readFileSync } from "node:fs";
import { expect, it } from "vitest";
import { openApiDocument } from "../../../src/http/openapi/openapi";
import { kinds } from "../../../src/worker/kinds";

// The document GET /openapi.json serves is the committed one, docs/openapi.json: the operations, their
// paths, schemas and answers do not move unless the contract does (then docs/API.md changes in the same
// commit, and docs/openapi.json is written anew from console/openapi.json, which `node tools/generate.mjs` makes).
it("the served OpenAPI document is docs/openapi.json, operation for operation", () => {
  const { servers: _servers, ...served } = openApiDocument("https://origin.invalid", kinds);
  const committed = JSON.parse(readFileSync("docs/openapi.json", "utf8"));
  expect(Object.keys(served.paths)).toEqual(Object.keys(committed.paths));
  expect(served).toEqual(committed);
});

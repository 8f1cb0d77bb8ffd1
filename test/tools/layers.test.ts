// The folder layers CI keeps (tools/check-layers.mjs): an import up the layers, a client
// import of anything but the wire layer, and two folders importing each other are caught;
// type-only imports and imports down the layers are not.
import { describe, expect, it } from "vitest";
import { runtimeImports, violations } from "../../tools/check-layers.mjs";

const tree = (files: Record<string, string>) => violations(Object.entries(files));

describe("the layer check", () => {
  it("catches a planted upward import: the core importing HTTP", () => {
    const found = tree({ "src/store/x.ts": 'import { app } from "../http/app.js";\n', "src/http/app.ts": "" });
    expect(found).toEqual(["src/store/x.ts -> src/http/app.ts (core imports http, a layer above it)"]);
  });

  it("lets imports go down the layers, and type-only imports anywhere", () => {
    expect(
      tree({
        "src/http/app.ts": 'import { LockedError } from "../errors.js";\nimport { kindOps } from "../store/types.js";\n',
        "src/store/types.ts":
          'import type { MutexOps } from "../kinds/mutex/types.js";\nimport { type X, type Y } from "../kinds/registry/ops.js";\n',
        "src/errors.ts": "",
        "src/kinds/mutex/types.ts": "",
        "src/kinds/registry/ops.ts": "",
      }),
    ).toEqual([]);
  });

  it("keeps the client to the wire layer (it ships to browsers)", () => {
    const found = tree({
      "src/client/x.ts": 'import { SOCKET_PROTOCOL } from "../lockObject/socketProtocol.js";\n',
      "src/lockObject/socketProtocol.ts": "",
    });
    expect(found).toEqual(["src/client/x.ts -> src/lockObject/socketProtocol.ts (src/client/ imports only wire)"]);
  });

  it("catches two folders that import each other, even within one layer", () => {
    const found = tree({ "src/store/a.ts": 'import "../lockObject/b.js";\n', "src/lockObject/b.ts": 'export { a } from "../store/a.js";\n' });
    expect(found).toEqual([
      "src/lockObject/b.ts -> src/store/a.ts (src/lockObject and src/store import each other)",
      "src/store/a.ts -> src/lockObject/b.ts (src/store and src/lockObject import each other)",
    ]);
  });

  it("reads a kind's routes as HTTP and its service as the service layer, not as the kind", () => {
    expect(tree({ "src/kinds/mutex/routes.ts": 'import { lockName } from "../../http/lockName.js";\n', "src/http/lockName.ts": "" })).toEqual([]);
    expect(tree({ "src/kinds/mutex/redisMutex.ts": 'import { lockName } from "../../http/lockName.js";\n', "src/http/lockName.ts": "" })).toEqual([
      "src/kinds/mutex/redisMutex.ts -> src/http/lockName.ts (kinds imports http, a layer above it)",
    ]);
  });

  it("names a file that belongs to no layer", () => {
    expect(tree({ "src/http/a.ts": 'import "../somewhere/b.js";\n', "src/somewhere/b.ts": "" })[0]).toMatch(/a file in no layer/);
  });

  it("reads a runtime import that follows a package's type import (one statement is not read into the next)", () => {
    const text = 'import type { Redis } from "@upstash/redis";\nimport { redisKinds } from "../../kinds/registry/redis.js";\n';
    expect(runtimeImports("src/store/redis/RedisStore.ts", text)).toEqual(["src/kinds/registry/redis.ts"]);
  });

  it("reads dynamic imports and re-exports as runtime imports", () => {
    expect(runtimeImports("src/a/x.ts", 'const m = await import("../b/y.js");\nexport * from "./z.js";\n').sort()).toEqual([
      "src/a/z.ts",
      "src/b/y.ts",
    ]);
  });
});

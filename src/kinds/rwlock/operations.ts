import { leaseOperations } from "../../http/operations/leaseOperations.js";
import { rwReleaseResponse, rwStateResponse } from "./schemas.js";
import { releaseRw, rwAcquire } from "./service.js";
import { RWLOCK, type RwMode } from "./types.js";

/**
 * /v1/rwlocks/{name}: the read-write lock, one value per operation (docs/API.md
 * "Read-write lock"). `read/...` and `write/...` name the mode; heartbeat and
 * release also work without it (the token says which holder). Each mode is
 * its own literal step, not one `:mode{read|write}` pattern: a pattern beside
 * the literal `/:name/heartbeat` is a route Hono's RegExpRouter refuses, and
 * the app would fall back to its slower TrieRouter (test/http/router.test.ts).
 */
const rwlock = { key: RWLOCK, names: "Rw" };
const modeOperations = (mode: RwMode) =>
  leaseOperations({
    ...rwlock,
    mode,
    acquire: [`Acquire or re-enter a ${mode} lock`, rwAcquire],
    wait: `Wait for a ${mode} lock over a WebSocket`,
    // The token says which holder: the mode in the path changes nothing here.
    heartbeat: "Extend a read-write lock holder's lease",
    release: [`Release one ${mode} hold`, rwReleaseResponse, releaseRw],
  });

export const rwLockOperations = [
  ...modeOperations("read"),
  ...modeOperations("write"),
  ...leaseOperations({
    ...rwlock,
    heartbeat: "Extend a read-write lock holder's lease, whatever it holds",
    release: ["Release the token's write hold, or else one read hold", rwReleaseResponse, releaseRw],
    inspect: ["Inspect a read-write lock", rwStateResponse],
  }),
];

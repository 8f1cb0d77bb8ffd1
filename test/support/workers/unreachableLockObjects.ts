import type { Env } from "../../../src/env";

/**
 * A LOCK_OBJECT binding whose every lock object call fails. It is a fake: lock objects that fail every call, or
 * fail on demand, cannot be caused for real inside the test runtime, so a test that needs them says so.
 */
export const unreachableLockObjects = {
  idFromName: (name: string) => ({ toString: () => name }),
  get: () =>
    new Proxy(
      {},
      {
        get: () => () => Promise.reject(new Error("lock object unreachable (test fake)")),
      },
    ),
} as unknown as Env["LOCK_OBJECT"];

import { LeaseLostError } from "../errors.js";

/**
 * Runs fn with a grant and gives it back afterwards, even when fn throws. A
 * lease already lost by then (it lapsed while fn ran) is not an error of the
 * release: fn's own outcome is what the caller hears.
 */
export async function holding<G extends { token: string }, T>(
  grant: G,
  release: (token: string) => Promise<unknown>,
  fn: (grant: G) => Promise<T>,
): Promise<T> {
  try {
    return await fn(grant);
  } finally {
    await release(grant.token).catch((err) => {
      if (!(err instanceof LeaseLostError)) throw err;
    });
  }
}

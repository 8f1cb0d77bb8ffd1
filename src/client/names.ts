import { nameProblem } from "../validation.js";
import { InvalidRequestError } from "./errors.js";

/**
 * A lock name or idempotency key as a URL path segment, refused here with the service's own answer
 * (400 invalid_name) when it is not one: "." and ".." would be dropped from the URL and reach
 * another route (a 405 or 404 naming nothing), and a name too long is said with its length.
 */
export function nameSegment(name: string): string {
  const problem = nameProblem(name);
  if (problem) throw new InvalidRequestError("invalid_name", problem, 400, { error: "invalid_name", message: problem });
  return encodeURIComponent(name);
}

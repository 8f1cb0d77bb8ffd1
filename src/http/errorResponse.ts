import type { Context } from "hono";
import { errorAnswer } from "../wire/errorAnswer.js";

/** A typed error as the HTTP answer (see errorAnswer). */
export function errorResponse(c: Context, err: unknown): Response {
  const answer = errorAnswer(err);
  if (answer.retryAfterMs !== undefined) c.header("Retry-After", String(Math.max(1, Math.ceil(answer.retryAfterMs / 1000))));
  return c.json(answer.body, answer.status);
}

import type { Context } from "hono";
import { errorAnswer, retryAfterHeader } from "../wire/errorAnswer.js";

/** A typed error as the HTTP answer (see errorAnswer). */
export function errorResponse(c: Context, err: unknown): Response {
  const answer = errorAnswer(err);
  const retryAfter = retryAfterHeader(answer);
  if (retryAfter !== undefined) c.header("Retry-After", retryAfter);
  return c.json(answer.body, answer.status);
}

import type { Context } from "hono";
import { InvalidInputError } from "../errors.js";
import { nameProblem } from "../validation.js";

/** The {name} path segment, checked against the contract's pattern (its length named when too long). */
export function lockName(c: Context, param = "name"): string {
  const name = c.req.param(param) ?? "";
  const problem = nameProblem(name);
  if (problem) throw new InvalidInputError("invalid_name", problem);
  return name;
}

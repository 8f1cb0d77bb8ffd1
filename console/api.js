// The console's one way to call the service: same origin, the key in the
// Authorization header, JSON both ways, every failure as an ApiError whose
// message is the service's own sentence (shown to the operator as text).
import { currentKey } from "./session.js";

export class ApiError extends Error {
  /** @param {number} status 0 when the service could not be reached @param {string} code */
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/**
 * Calls the service. `key` overrides the signed-in key (sign-in checks a key
 * before keeping it). Answers the parsed body of a 2xx; throws ApiError otherwise.
 * @param {string} path @param {{ method?: string, body?: unknown, key?: string }} [options]
 */
export async function api(path, { method = "GET", body, key = currentKey() ?? "" } = {}) {
  const headers = { authorization: `Bearer ${key}` };
  if (body !== undefined) headers["content-type"] = "application/json";
  let response;
  try {
    // no-store: every poll must see the store as it is now, never a cached answer.
    response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: "no-store" });
  } catch {
    throw new ApiError(0, "unreachable", "the service could not be reached");
  }
  const data = await response.json().catch(() => null);
  if (response.ok) return data;
  const message = typeof data?.message === "string" && data.message ? data.message : `the service answered ${response.status}`;
  throw new ApiError(response.status, typeof data?.error === "string" ? data.error : `http_${response.status}`, message);
}

/** "?a=1&b=2" from the parameters that have a value ("" when none do). */
export function query(params) {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined && value !== null && value !== "") search.set(name, String(value));
  const text = search.toString();
  return text ? `?${text}` : "";
}

/** Lock names as the service allows them (docs/API.md, "Names"): safe in a path as they are. */
const NAME = /^[A-Za-z0-9._:@+=-]{1,200}$/;

/** The path of one lock: `base`/`name`, refusing a name no lock can have rather than building an odd URL. */
export function lockPath(base, name) {
  if (!NAME.test(name)) throw new ApiError(0, "invalid_name", `${name} is not a lock name this service uses`);
  return `${base}/${name}`;
}

import { HoldfastError } from "../errors.js";
import { NAMESPACE_PATTERN } from "../limits.js";

export class UnauthorizedError extends HoldfastError {
  constructor() {
    super("unauthorized", "a valid API key is required: Authorization: Bearer <key>");
  }
}

export class NotConfiguredError extends HoldfastError {
  constructor(detail: string) {
    super("not_configured", `the service has no usable API keys (${detail}); set the API_KEYS secret`);
  }
}

interface KeyEntry {
  namespace: string;
  digest: Uint8Array;
}

const parsedKeys = new Map<string, Promise<KeyEntry[]>>();

/**
 * Resolves the namespace of the bearer key. Fails closed: no API_KEYS, or a
 * malformed one, refuses every request. Keys are compared as SHA-256 digests
 * in constant time, so timing does not reveal how much of a key matched.
 */
export async function namespaceOf(authorization: string | undefined, apiKeys: string | undefined): Promise<string> {
  if (!apiKeys?.trim()) throw new NotConfiguredError("API_KEYS is not set");
  let entries = parsedKeys.get(apiKeys);
  if (!entries) {
    entries = parseApiKeys(apiKeys);
    parsedKeys.set(apiKeys, entries);
  }
  const keys = await entries;
  const presented = bearerKey(authorization);
  if (!presented) throw new UnauthorizedError();
  const digest = await sha256(presented);
  let found: string | undefined;
  for (const k of keys) if (equalDigests(k.digest, digest)) found = k.namespace;
  if (!found) throw new UnauthorizedError();
  return found;
}

/** The key of an `Authorization: Bearer <key>` header, or undefined. */
export function bearerKey(authorization: string | undefined): string | undefined {
  return /^Bearer (.+)$/.exec(authorization ?? "")?.[1]?.trim() || undefined;
}

async function parseApiKeys(apiKeys: string): Promise<KeyEntry[]> {
  const entries: KeyEntry[] = [];
  for (const pair of apiKeys
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean)) {
    const eq = pair.indexOf("=");
    const namespace = pair.slice(0, eq);
    const key = pair.slice(eq + 1);
    if (eq < 1 || !NAMESPACE_PATTERN.test(namespace) || key.length < 8) {
      throw new NotConfiguredError(`API_KEYS entry "${namespace || pair.slice(0, 8)}…" is not namespace=key with a key of 8+ characters`);
    }
    entries.push({ namespace, digest: await sha256(key) });
  }
  if (!entries.length) throw new NotConfiguredError("API_KEYS has no entries");
  return entries;
}

async function sha256(s: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(s)));
}

function equalDigests(a: Uint8Array, b: Uint8Array): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0; i < a.length; i++) diff |= a[i] ^ b[i];
  return diff === 0;
}

import { InvalidInputError } from "../errors.js";
import { NAMESPACE_PATTERN } from "../limits.js";
import { settingEntries } from "./settingEntries.js";

/**
 * Where expiry notifications may go. A notification is a signed POST the
 * service makes on a caller's behalf, so an unchecked onExpire would let any
 * API key aim the service at internal addresses (server-side request
 * forgery) or at someone else's receiver. The rules:
 *
 * - https only; plain http only to loopback, and only with the local
 *   development switch ONEXPIRE_ALLOW_HTTP_LOCALHOST=1;
 * - the host must be on the namespace's allow-list (ONEXPIRE_HOSTS), e.g.
 *   "shop=hooks.shop.example|*.shop.example,billing=billing.example" ("*=..."
 *   applies to every namespace); no list, no notifications;
 * - never an address that is loopback, private, link-local (cloud metadata
 *   included), unspecified, multicast or otherwise not public, written in
 *   any form the URL parser accepts, and never a name that only resolves
 *   inside a network (localhost, *.local, *.internal); allow-listed or not.
 *
 * Names are not resolved here: the Workers runtime offers no DNS lookup, and
 * on Cloudflare a Worker's fetch cannot reach private addresses anyway. The
 * allow-list is what keeps a name that resolves somewhere unexpected out.
 */
export interface OnExpireConfig {
  ONEXPIRE_HOSTS?: string;
  ONEXPIRE_ALLOW_HTTP_LOCALHOST?: string;
}

/** Why `url` may not receive notifications for namespace `ns`, or undefined when it may. */
function onExpireTargetProblem(url: string, ns: string, config: OnExpireConfig): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return "onExpire is not a URL";
  }
  if (u.username || u.password) return "onExpire may not carry credentials";
  // Brackets off an IPv6 literal, and a root-zone dot off a name ("localhost." is localhost).
  const host = u.hostname
    .toLowerCase()
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "");
  const loopback = isLoopback(host);
  const devHttp = config.ONEXPIRE_ALLOW_HTTP_LOCALHOST === "1" && loopback;
  if (u.protocol !== "https:" && !(u.protocol === "http:" && devHttp)) {
    return "onExpire must be an https URL (http only to localhost, with ONEXPIRE_ALLOW_HTTP_LOCALHOST=1 for local development)";
  }
  if (!devHttp && (loopback || isInternalName(host) || isNonPublicAddress(host))) {
    return `onExpire may not point at ${host}: loopback, private, link-local and internal addresses never receive notifications`;
  }
  const allowed = allowListOf(config.ONEXPIRE_HOSTS, ns);
  if (!allowed.length) {
    return `onExpire is not enabled for this namespace: list its receivers' hosts in the service's ONEXPIRE_HOSTS (${ns}=hooks.example.com)`;
  }
  if (!allowed.some((pattern) => hostMatches(host, pattern))) return `onExpire host ${host} is not on this namespace's allow-list (ONEXPIRE_HOSTS)`;
  return undefined;
}

/** What is wrong with ONEXPIRE_HOSTS (its first bad entry, by position), or undefined; a bad entry allows nothing. */
export function onExpireHostsProblem(config: string | undefined): string | undefined {
  const entries = settingEntries(config);
  for (const [i, entry] of entries.entries()) {
    const eq = entry.indexOf("=");
    const owner = entry.slice(0, Math.max(eq, 0)).trim();
    const hosts = entry
      .slice(eq + 1)
      .split("|")
      .map((h) => h.trim());
    let wrong: string | undefined;
    if (eq < 1 || (owner !== "*" && !NAMESPACE_PATTERN.test(owner))) wrong = "has no namespace (or *) before its =";
    else if (hosts.some((h) => !HOST_PATTERN.test(h))) wrong = "lists something that is not a host name or *.suffix (no scheme, port or path)";
    if (wrong) return `ONEXPIRE_HOSTS entry ${i + 1} of ${entries.length} is not namespace=host|*.suffix: it ${wrong}`;
  }
  return undefined;
}

/**
 * A host name or IPv4 address, or "*." and a suffix, or an IPv6 address without its brackets (hostMatches
 * compares with the URL's host, brackets taken off): what ONEXPIRE_HOSTS lists (no scheme, port or path).
 */
const HOST_PATTERN = /^(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*\.?$|^[0-9A-Fa-f.]*:[0-9A-Fa-f:.]*$/;

/** The namespace's allowed host patterns, with those for every namespace ("*"). */
function allowListOf(config: string | undefined, ns: string): string[] {
  const hosts: string[] = [];
  for (const entry of (config ?? "").split(",")) {
    const eq = entry.indexOf("=");
    if (eq < 1) continue;
    const owner = entry.slice(0, eq).trim();
    if (owner !== ns && owner !== "*") continue;
    for (const h of entry.slice(eq + 1).split("|")) if (h.trim()) hosts.push(h.trim().toLowerCase());
  }
  return hosts;
}

function hostMatches(host: string, pattern: string): boolean {
  if (pattern.startsWith("*.")) return host.endsWith(pattern.slice(1)) && host.length > pattern.length - 1;
  return host === pattern;
}

function isLoopback(host: string): boolean {
  if (host === "localhost" || host.endsWith(".localhost") || host === "::1") return true;
  const v4 = ipv4Of(host);
  return v4 !== undefined && v4[0] === 127;
}

function isInternalName(host: string): boolean {
  if (!host.includes(".") && !host.includes(":")) return true; // a bare name: resolves only on some network's search path
  return /\.(local|internal|intranet|lan|home\.arpa|corp)$/.test(host);
}

/** IPv4 and IPv6 literals that are not public unicast addresses. */
function isNonPublicAddress(host: string): boolean {
  const v4 = ipv4Of(host);
  if (v4) return nonPublicV4(v4);
  if (!host.includes(":")) return false;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(host)?.[1] ?? mappedHex(host);
  if (mapped) return nonPublicV4(ipv4Of(mapped) ?? [0, 0, 0, 0]);
  const first = Number.parseInt(host.split(":")[0] || "0", 16);
  return (
    host.startsWith("::") || // ::/16 and below: unspecified, loopback, IPv4-compatible (::7f00:1) and mapped forms
    host === "::1" ||
    (first & 0xfe00) === 0xfc00 || // fc00::/7 unique local
    (first & 0xffc0) === 0xfe80 || // fe80::/10 link-local
    (first & 0xff00) === 0xff00 || // multicast
    host.startsWith("64:ff9b:") || // NAT64 may reach any IPv4
    host.startsWith("2001:db8:") // documentation
  );
}

/** ::ffff:7f00:1 (the URL parser's form of ::ffff:127.0.0.1) as dotted IPv4. */
function mappedHex(host: string): string | undefined {
  const m = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(host);
  if (!m) return undefined;
  const hi = Number.parseInt(m[1], 16);
  const lo = Number.parseInt(m[2], 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

function ipv4Of(host: string): number[] | undefined {
  // The URL parser has already turned 2130706433, 0x7f.1 and 127.1 into dotted form.
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  return m ? m.slice(1).map(Number) : undefined;
}

function nonPublicV4([a, b]: number[]): boolean {
  return (
    a === 0 || // "this network"
    a === 10 ||
    a === 127 ||
    (a === 100 && b >= 64 && b <= 127) || // carrier-grade NAT
    (a === 169 && b === 254) || // link-local, cloud metadata (169.254.169.254)
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 192 && b === 0) || // IETF protocol assignments
    (a === 198 && (b === 18 || b === 19)) || // benchmarking
    a >= 224 // multicast, reserved, broadcast
  );
}

/**
 * An onExpire is refused up front (400 invalid_on_expire) when notifications could not be
 * signed, or may not go where it points: over HTTP (a kind's acquire) and on a wait socket alike.
 */
export function checkOnExpire(env: OnExpireConfig & { WEBHOOK_SECRET?: string }, ns: string, url: string): void {
  if (!env.WEBHOOK_SECRET) {
    throw new InvalidInputError("invalid_on_expire", "expiry notifications need the service's WEBHOOK_SECRET, which is not set");
  }
  const problem = onExpireTargetProblem(url, ns, env);
  if (problem) throw new InvalidInputError("invalid_on_expire", problem);
}

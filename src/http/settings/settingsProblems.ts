import { DEFAULT_STORE_TIMEOUT_MS } from "../../deadline.js";
import type { Env } from "../../env.js";
import { SOCKET_OPEN_BURST_DEFAULT, SOCKET_OPENS_PER_SECOND_DEFAULT, SOCKETS_PER_NAMESPACE_DEFAULT, WAITERS_PER_LOCK_DEFAULT } from "../../limits.js";
import { rateLimitTiersProblem } from "../../admission/rateLimit.js";
import { quorumListProblem } from "../../store/quorum/QuorumStore.js";
import { onExpireHostsProblem } from "../../wire/onExpireTarget.js";
import { apiKeysProblem } from "../access/auth.js";
import { corsOriginsProblem } from "../access/cors.js";
import { tokenSecretsProblem } from "../access/scopedTokens.js";

/** Every variable the Worker reads from its settings (docs/deploy.md's table; src/env.ts). */
export const SETTINGS = [
  "API_KEYS",
  "TOKEN_SECRETS",
  "CORS_ORIGINS",
  "WEBHOOK_SECRET",
  "ONEXPIRE_HOSTS",
  "ONEXPIRE_ALLOW_HTTP_LOCALHOST",
  "RATE_LIMIT_TIERS",
  "MAX_WAITERS_PER_LOCK",
  "MAX_SOCKETS_PER_NAMESPACE",
  "SOCKET_OPEN_BURST",
  "SOCKET_OPENS_PER_SECOND",
  "STORE_TIMEOUT_MS",
  "UPSTASH_REDIS_REST_URL",
  "UPSTASH_REDIS_REST_TOKEN",
  "UPSTASH_REDIS_REST_URLS",
  "UPSTASH_REDIS_REST_TOKENS",
] as const satisfies readonly (keyof Env)[];
type SettingName = (typeof SETTINGS)[number];
export type Settings = Partial<Record<SettingName, string>>;

/** A setting the Worker ignores or cannot use: the variable, and a sentence naming the entry and what is wrong, never the value. */
export interface SettingProblem {
  variable: SettingName;
  message: string;
}

/** Below this a WEBHOOK_SECRET is too short to sign with (a guessable key forges notifications). */
const WEBHOOK_SECRET_MIN_CHARS = 16;

/**
 * What is wrong with the settings, one entry per variable, each said with
 * what the Worker does about it. Asked by `npm start` before it serves
 * (tools/dev/start.mjs: exit 78), by the Worker for its first log line, and
 * by /healthz. Each variable's rule is its reader's (the parsers export
 * their own check), so this says what the Worker will do, not a guess.
 */
export async function settingsProblems(env: Settings): Promise<SettingProblem[]> {
  const problems: SettingProblem[] = [];
  const say = (variable: SettingName, message: string | undefined, effect: string) => {
    if (message) problems.push({ variable, message: `${message}; ${effect}` });
  };
  const set = (name: SettingName) => env[name] !== undefined && env[name] !== "";

  say("API_KEYS", await apiKeysProblem(env.API_KEYS), "every /v1 request is refused (503 not_configured)");
  say("TOKEN_SECRETS", tokenSecretsProblem(env.TOKEN_SECRETS), "scoped tokens are refused and none can be minted (503 not_configured)");
  say("CORS_ORIGINS", corsOriginsProblem(env.CORS_ORIGINS), "CORS_ORIGINS is ignored, so every browser origin is refused");
  if (set("WEBHOOK_SECRET") && (env.WEBHOOK_SECRET as string).trim().length < WEBHOOK_SECRET_MIN_CHARS) {
    say(
      "WEBHOOK_SECRET",
      `WEBHOOK_SECRET is shorter than ${WEBHOOK_SECRET_MIN_CHARS} characters`,
      "use 32+ random ones: it signs expiry notifications",
    );
  }
  say("ONEXPIRE_HOSTS", onExpireHostsProblem(env.ONEXPIRE_HOSTS), "that entry allows no host");
  if (set("ONEXPIRE_ALLOW_HTTP_LOCALHOST") && env.ONEXPIRE_ALLOW_HTTP_LOCALHOST !== "1") {
    say("ONEXPIRE_ALLOW_HTTP_LOCALHOST", "ONEXPIRE_ALLOW_HTTP_LOCALHOST is not 1, the one value that turns it on", "it is ignored");
  }
  say("RATE_LIMIT_TIERS", rateLimitTiersProblem(env.RATE_LIMIT_TIERS), "that entry is skipped");
  say("MAX_WAITERS_PER_LOCK", wholeNumberProblem(env, "MAX_WAITERS_PER_LOCK"), `the default ${WAITERS_PER_LOCK_DEFAULT} is used`);
  say("MAX_SOCKETS_PER_NAMESPACE", wholeNumberProblem(env, "MAX_SOCKETS_PER_NAMESPACE"), `the default ${SOCKETS_PER_NAMESPACE_DEFAULT} is used`);
  say("SOCKET_OPEN_BURST", wholeNumberProblem(env, "SOCKET_OPEN_BURST"), `the default ${SOCKET_OPEN_BURST_DEFAULT} is used`);
  say("SOCKET_OPENS_PER_SECOND", wholeNumberProblem(env, "SOCKET_OPENS_PER_SECOND"), `the default ${SOCKET_OPENS_PER_SECOND_DEFAULT} is used`);
  say("STORE_TIMEOUT_MS", wholeNumberProblem(env, "STORE_TIMEOUT_MS"), `the default ${DEFAULT_STORE_TIMEOUT_MS} ms is used`);
  problems.push(...upstashProblems(env, set));
  return problems;
}

function wholeNumberProblem(env: Settings, name: SettingName): string | undefined {
  const text = env[name];
  if (text === undefined || text === "") return undefined;
  const n = Number(text);
  return Number.isSafeInteger(n) && n > 0 ? undefined : `${name} is not a whole number above 0`;
}

/** The Upstash settings: each pair complete (else ignored: another store serves), each URL one @upstash/redis takes. */
function upstashProblems(env: Settings, set: (name: SettingName) => boolean): SettingProblem[] {
  const problems: SettingProblem[] = [];
  const pairs = [
    ["UPSTASH_REDIS_REST_URL", "UPSTASH_REDIS_REST_TOKEN", "the Redis store is not used"],
    ["UPSTASH_REDIS_REST_URLS", "UPSTASH_REDIS_REST_TOKENS", "the quorum is not used"],
  ] as const;
  for (const [urlName, tokenName, effect] of pairs) {
    if (set(urlName) !== set(tokenName)) {
      const [given, missing] = set(urlName) ? [urlName, tokenName] : [tokenName, urlName];
      problems.push({ variable: given, message: `${given} is set but ${missing} is not; ${effect}` });
    }
  }
  if (set("UPSTASH_REDIS_REST_URL") && !isRestUrl(env.UPSTASH_REDIS_REST_URL as string)) {
    problems.push({
      variable: "UPSTASH_REDIS_REST_URL",
      message: "UPSTASH_REDIS_REST_URL is not an http(s) URL such as https://<name>.upstash.io; every request fails until it is fixed",
    });
  }
  if (set("UPSTASH_REDIS_REST_URLS") && set("UPSTASH_REDIS_REST_TOKENS")) {
    const urls = (env.UPSTASH_REDIS_REST_URLS as string).split(",").map((u) => u.trim());
    const tokens = (env.UPSTASH_REDIS_REST_TOKENS as string).split(",").map((t) => t.trim());
    const badUrl = urls.findIndex((u) => !isRestUrl(u));
    const problem =
      badUrl >= 0 ? `UPSTASH_REDIS_REST_URLS entry ${badUrl + 1} of ${urls.length} is not an http(s) URL` : quorumListProblem(urls, tokens);
    if (problem) problems.push({ variable: "UPSTASH_REDIS_REST_URLS", message: `${problem}; every request is refused (503 not_configured)` });
  }
  return problems;
}

/** What @upstash/redis accepts as its URL (its own check, pkg/http.ts), and an http(s) one. */
function isRestUrl(text: string): boolean {
  return /^https?:\/\/[^\s#$./?].\S*$/.test(text);
}

// `npm start` (tools/dev/start.mjs, a real process) checks every documented variable before anything
// starts: a malformed one exits 78, naming the variable, the entry and what is wrong, never the value.
// No Worker is served in these cases, so each is a Node process that reads its settings and stops.
import { spawn } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { SETTINGS } from "../../src/http/settings/settingsProblems";

const START = path.resolve("tools/dev/start.mjs");

/** Runs start.mjs with only `vars` of the Worker's settings set (none inherited), on a port it never reaches. */
function start(vars: Record<string, string>, args: string[] = []): Promise<{ status: number | null; output: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: "1" };
  for (const name of SETTINGS) delete env[name];
  Object.assign(env, vars);
  const child = spawn(process.execPath, [START, ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (d) => {
    output += d;
  });
  child.stderr.on("data", (d) => {
    output += d;
  });
  return new Promise((resolve) => child.on("close", (status) => resolve({ status, output })));
}

/** Each documented variable, a value it refuses, and what the message must say of it. */
const MALFORMED: Array<{ vars: Record<string, string>; variable: (typeof SETTINGS)[number]; says: RegExp; secret?: string }> = [
  {
    variable: "API_KEYS",
    vars: { API_KEYS: "shop=k7,shop:admin=key-of-the-admin" },
    says: /API_KEYS entry 1 of 2 .*key of 8\+ characters/,
    secret: "k7",
  },
  {
    variable: "TOKEN_SECRETS",
    vars: { TOKEN_SECRETS: "default=only-24-characters-long" },
    says: /TOKEN_SECRETS entry 1 of 1 .*32\+ characters/,
    secret: "only-24",
  },
  {
    variable: "CORS_ORIGINS",
    vars: { CORS_ORIGINS: "default=http://localhost:5173/" },
    says: /CORS_ORIGINS entry 1 of 1 .*ends with a slash.*ignored/,
  },
  { variable: "WEBHOOK_SECRET", vars: { WEBHOOK_SECRET: "hush-hush" }, says: /WEBHOOK_SECRET is shorter than 16 characters/, secret: "hush-hush" },
  { variable: "ONEXPIRE_HOSTS", vars: { ONEXPIRE_HOSTS: "default=https://hooks.example" }, says: /ONEXPIRE_HOSTS entry 1 of 1 .*not a host name/ },
  {
    variable: "ONEXPIRE_ALLOW_HTTP_LOCALHOST",
    vars: { ONEXPIRE_ALLOW_HTTP_LOCALHOST: "true" },
    says: /ONEXPIRE_ALLOW_HTTP_LOCALHOST is not 1.*ignored/,
  },
  {
    variable: "RATE_LIMIT_TIERS",
    vars: { RATE_LIMIT_TIERS: "*=standard,batch=fast" },
    says: /RATE_LIMIT_TIERS entry 2 of 2 .*low, standard, high or off/,
  },
  {
    variable: "MAX_WAITERS_PER_LOCK",
    vars: { MAX_WAITERS_PER_LOCK: "10k" },
    says: /MAX_WAITERS_PER_LOCK is not a whole number above 0; the default 10000/,
  },
  {
    variable: "MAX_SOCKETS_PER_NAMESPACE",
    vars: { MAX_SOCKETS_PER_NAMESPACE: "-1" },
    says: /MAX_SOCKETS_PER_NAMESPACE is not a whole number above 0/,
  },
  { variable: "SOCKET_OPEN_BURST", vars: { SOCKET_OPEN_BURST: "0" }, says: /SOCKET_OPEN_BURST is not a whole number above 0; the default 20/ },
  {
    variable: "SOCKET_OPENS_PER_SECOND",
    vars: { SOCKET_OPENS_PER_SECOND: "2.5" },
    says: /SOCKET_OPENS_PER_SECOND is not a whole number above 0; the default 10/,
  },
  { variable: "STORE_TIMEOUT_MS", vars: { STORE_TIMEOUT_MS: "2s" }, says: /STORE_TIMEOUT_MS is not a whole number above 0; the default 2000 ms/ },
  {
    variable: "UPSTASH_REDIS_REST_URL",
    vars: { UPSTASH_REDIS_REST_URL: "localhost:8079", UPSTASH_REDIS_REST_TOKEN: "a-token-of-the-db" },
    says: /UPSTASH_REDIS_REST_URL is not an http\(s\) URL/,
    secret: "a-token-of-the-db",
  },
  {
    variable: "UPSTASH_REDIS_REST_TOKEN",
    vars: { UPSTASH_REDIS_REST_TOKEN: "a-token-of-the-db" },
    says: /UPSTASH_REDIS_REST_TOKEN is set but UPSTASH_REDIS_REST_URL is not/,
    secret: "a-token-of-the-db",
  },
  {
    variable: "UPSTASH_REDIS_REST_URLS",
    vars: { UPSTASH_REDIS_REST_URLS: "https://a.upstash.io,https://b.upstash.io", UPSTASH_REDIS_REST_TOKENS: "token-a1,token-b2" },
    says: /UPSTASH_REDIS_REST_URLS lists 2 databases; a quorum needs an odd number of at least 3/,
    secret: "token-a1",
  },
  {
    variable: "UPSTASH_REDIS_REST_URLS",
    vars: {
      UPSTASH_REDIS_REST_URLS: "https://a.upstash.io,https://b.upstash.io,https://A.upstash.io/",
      UPSTASH_REDIS_REST_TOKENS: "token-a1,token-b2,token-a1",
    },
    says: /UPSTASH_REDIS_REST_URLS has https:\/\/A\.upstash\.io\/ listed twice; each database must count once/,
    secret: "token-a1",
  },
  {
    variable: "UPSTASH_REDIS_REST_TOKENS",
    vars: { UPSTASH_REDIS_REST_TOKENS: "token-a1,token-b2,token-c3" },
    says: /UPSTASH_REDIS_REST_TOKENS is set but UPSTASH_REDIS_REST_URLS is not/,
    secret: "token-a1",
  },
];

describe.concurrent("npm start checks each documented setting before anything starts", () => {
  it("covers every variable the Worker reads", () => {
    expect([...new Set(MALFORMED.map((c) => c.variable))].sort()).toEqual([...SETTINGS].sort());
  });

  for (const { variable, vars, says, secret } of MALFORMED) {
    it(`a malformed ${variable} exits 78 naming it, the entry and what is wrong`, async () => {
      const { status, output } = await start(vars);
      expect(status, output).toBe(78);
      expect(output).toMatch(new RegExp(`^npm start: .*${says.source}`, "m"));
      expect(output).toMatch(new RegExp(`^npm start: fix ${variable} \\(the environment, or \\.dev\\.vars\\); nothing was started$`, "m"));
      if (secret) expect(output).not.toContain(secret);
      expect(output).not.toMatch(/bundling|holdfast \(/); // nothing served
    });
  }

  it("npm run start:redis names itself", async () => {
    const { status, output } = await start({ CORS_ORIGINS: "default=http://localhost:5173/" }, ["--redis"]);
    expect(status, output).toBe(78);
    expect(output).toMatch(/^npm run start:redis: CORS_ORIGINS entry 1 of 1/m);
  });
});

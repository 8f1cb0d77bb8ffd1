import { parseArgs } from "node:util";
import type { LeaseKind, WaitChannel } from "../client/index.js";
import { LEASE_KINDS } from "../client/lease.js";
import { formatDuration, parseDuration } from "./durations.js";
import { EXIT } from "./exitCodes.js";

/** A problem with how holdfast was called: its message says what to do; exits with `status`. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly status: number = EXIT.usage,
  ) {
    super(message);
  }
}

interface Connection {
  url: string;
  apiKey: string;
  /** How --wait waits: a wait socket where this Node has WebSocket (22+), else HTTP (see HoldfastClientOptions.waitChannel). */
  waitChannel: WaitChannel;
}

export type Command =
  | { name: "help" }
  | { name: "run-lock"; lock: string; ttlMs: number; waitMs: number; graceMs: number; cmd: string[]; holder?: string }
  | {
      name: "run-slot";
      flow: string;
      concurrency?: number;
      rate?: { count: number; perMs: number };
      ttlMs: number;
      waitMs: number;
      graceMs: number;
      cmd: string[];
      holder?: string;
    }
  | { name: "run-once"; key: string; ttlMs: number; waitMs: number; retainMs: number; graceMs: number; cmd: string[]; holder?: string }
  /** kind: from --kind; without it, the mutex, or the idempotency key when no mutex of that name is in use. */
  | { name: "status"; target: string; kind?: LeaseKind }
  | { name: "release"; target: string; kind: LeaseKind; token: string; mode?: "read" | "write" }
  | { name: "list"; kind: LeaseKind; prefix?: string }
  | { name: "force-release"; target: string; kind: Exclude<LeaseKind, "idempotency">; reason: string; holder?: string; fence?: number }
  | { name: "audit"; limit: number }
  | { name: "elect"; election: string; value: string; ttlMs: number; graceMs: number; cmd: string[] }
  | { name: "leader"; election: string; watch: boolean };

export interface Parsed {
  command: Command;
  quiet: boolean;
  connection?: Connection;
}

const OPTIONS = {
  lock: { type: "string" },
  once: { type: "string" },
  ttl: { type: "string" },
  wait: { type: "string" },
  "wait-channel": { type: "string" },
  grace: { type: "string" },
  retain: { type: "string" },
  kind: { type: "string" },
  mode: { type: "string" },
  token: { type: "string" },
  holder: { type: "string" },
  prefix: { type: "string" },
  reason: { type: "string" },
  fence: { type: "string" },
  limit: { type: "string" },
  concurrency: { type: "string" },
  rate: { type: "string" },
  url: { type: "string" },
  "api-key": { type: "string" },
  quiet: { type: "boolean", short: "q" },
  help: { type: "boolean", short: "h" },
  value: { type: "string" },
  watch: { type: "boolean" },
} as const;

const KINDS: readonly LeaseKind[] = LEASE_KINDS;
/** The verbs whose first word after them is a NAME; any other verb refuses one. */
const VERBS_WITH_A_NAME = new Set(["status", "release", "force-release", "elect", "leader"]);
const WAIT_CHANNELS: WaitChannel[] = ["auto", "socket", "http"];

/** Reads argv (after the program name) and the environment into a command. */
export function parseCommand(argv: string[], env: Record<string, string | undefined>): Parsed {
  // Everything after the first "--" is CMD, untouched.
  const split = argv.indexOf("--");
  const own = split < 0 ? argv : argv.slice(0, split);
  const cmd = split < 0 ? [] : argv.slice(split + 1);
  let values: Record<string, string | boolean | undefined>;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({ args: own, options: OPTIONS, allowPositionals: true, strict: true }));
  } catch (err) {
    throw new CliError(`${(err as Error).message}. See holdfast --help.`);
  }
  const quiet = values.quiet === true;
  const [verb, target, ...extra] = positionals;
  if (values.help || verb === "help" || verb === undefined) return { command: { name: "help" }, quiet };
  if (extra.length)
    throw new CliError(`unexpected ${JSON.stringify(extra[0])}: put the command after "--", e.g. holdfast run --lock NAME -- ${extra.join(" ")}`);
  // A verb that takes no NAME refuses a stray word (`--ttl 30 seconds` would otherwise drop "seconds").
  if (target !== undefined && !VERBS_WITH_A_NAME.has(verb)) {
    throw new CliError(
      `unexpected ${JSON.stringify(target)}: ${verb} takes no NAME (a value with a space in it needs quotes; a command goes after "--")`,
    );
  }

  const str = (k: string) => values[k] as string | undefined;
  const duration = (flag: string, fallback: number) => {
    const text = str(flag);
    if (text === undefined) return fallback;
    const ms = parseDuration(text);
    if (ms === undefined)
      throw new CliError(`--${flag} ${JSON.stringify(text)} is not a duration: use 500ms, 30s, 5m, 2h, 1d or a number of seconds`);
    return ms;
  };
  const kind = (): LeaseKind => {
    const k = str("kind") ?? "mutex";
    if (!KINDS.includes(k as LeaseKind)) throw new CliError(`--kind ${JSON.stringify(k)}: use one of ${KINDS.join(", ")}`);
    return k as LeaseKind;
  };
  const connection = (): Connection => {
    const url = str("url") ?? env.HOLDFAST_URL;
    const apiKey = str("api-key") ?? env.HOLDFAST_API_KEY;
    if (!url) throw new CliError("no service URL: set HOLDFAST_URL (or pass --url https://your-holdfast.example.com)", EXIT.config);
    if (!/^https?:\/\//.test(url))
      throw new CliError(`the service URL ${JSON.stringify(url)} must start with https:// (or http:// locally)`, EXIT.config);
    if (!apiKey) throw new CliError("no API key: set HOLDFAST_API_KEY (or pass --api-key)", EXIT.config);
    const waitChannel = str("wait-channel") ?? env.HOLDFAST_WAIT_CHANNEL ?? "auto";
    if (!WAIT_CHANNELS.includes(waitChannel as WaitChannel)) {
      throw new CliError(`--wait-channel ${JSON.stringify(waitChannel)}: use ${WAIT_CHANNELS.join(", ")}`);
    }
    return { url, apiKey, waitChannel: waitChannel as WaitChannel };
  };

  /** --ttl and --grace of a command run under a lease: CMD is stopped (SIGTERM, then SIGKILL after the grace) before the lease can end. */
  const leaseTimes = () => {
    const ttlMs = duration("ttl", 30_000);
    if (ttlMs < 1000) throw new CliError(`--ttl ${formatDuration(ttlMs)} is too short for a command: use 1s or more`);
    const graceMs = duration("grace", Math.min(10_000, Math.floor(ttlMs / 4)));
    if (graceMs * 2 >= ttlMs) {
      throw new CliError(
        `--grace ${formatDuration(graceMs)} must be under half of --ttl ${formatDuration(ttlMs)}: CMD must be stopped before the lease can end`,
      );
    }
    return { ttlMs, graceMs };
  };

  switch (verb) {
    case "elect": {
      if (!target) throw new CliError("elect needs a NAME: holdfast elect NAME --value V -- CMD [ARGS...]");
      const value = str("value");
      if (!value) throw new CliError(`elect needs --value: what the leader says to everyone (an address, an instance id)`);
      if (!cmd.length) throw new CliError(`no command to run: holdfast elect ${target} --value V -- CMD [ARGS...]`);
      const { ttlMs, graceMs } = leaseTimes();
      return { command: { name: "elect", election: target, value, ttlMs, graceMs, cmd }, quiet, connection: connection() };
    }
    case "leader": {
      if (!target) throw new CliError("leader needs a NAME: holdfast leader NAME [--watch]");
      const conn = connection();
      // Said before the first line, not as an unexpected error after it: watching is a watch socket.
      if (values.watch === true && !(globalThis as { WebSocket?: unknown }).WebSocket) {
        throw new CliError(
          `leader --watch: this Node (${process.version}) has no WebSocket, which watching needs (Node 22 and later have one): run holdfast on Node 22+, or leave out --watch to see who leads now`,
        );
      }
      return { command: { name: "leader", election: target, watch: values.watch === true }, quiet, connection: conn };
    }
    case "run": {
      const lock = str("lock");
      const once = str("once");
      const flow = str("limit");
      if ([lock, once, flow].filter((v) => v !== undefined).length !== 1)
        throw new CliError("run needs exactly one of --lock NAME, --once KEY or --limit KEY");
      const slot = flow === undefined ? undefined : flowLimit(str("concurrency"), str("rate"));
      if (flow === undefined && (str("concurrency") !== undefined || str("rate") !== undefined))
        throw new CliError("--concurrency and --rate go with --limit KEY");
      const what = lock ? `--lock ${lock}` : once ? `--once ${once}` : `--limit ${flow}`;
      if (!cmd.length) throw new CliError(`no command to run: holdfast run ${what} -- CMD [ARGS...]`);
      const { ttlMs, graceMs } = leaseTimes();
      const common = { ttlMs, waitMs: duration("wait", 0), graceMs, cmd, ...(str("holder") === undefined ? {} : { holder: str("holder") }) };
      const conn = connection();
      if (conn.waitChannel === "socket" && !(globalThis as { WebSocket?: unknown }).WebSocket) {
        const asked = str("wait-channel") === undefined ? "HOLDFAST_WAIT_CHANNEL=socket" : "--wait-channel socket";
        throw new CliError(`${asked}: this Node (${process.version}) has no WebSocket (Node 22 and later have one): use --wait-channel auto or http`);
      }
      const command: Command =
        lock !== undefined
          ? { name: "run-lock", lock, ...common }
          : flow !== undefined
            ? { name: "run-slot", flow, ...slot, ...common }
            : { name: "run-once", key: once as string, retainMs: duration("retain", 86_400_000), ...common };
      return { command, quiet, connection: conn };
    }
    case "status":
      if (!target) throw new CliError("status needs a NAME: holdfast status NAME");
      return { command: { name: "status", target, ...(str("kind") === undefined ? {} : { kind: kind() }) }, quiet, connection: connection() };
    case "release": {
      if (!target) throw new CliError("release needs a NAME: holdfast release NAME --token TOKEN");
      const token = str("token");
      if (!token) throw new CliError("release needs the lease's --token (holdfast never shows tokens: take it from the holder's HOLDFAST_TOKEN)");
      const mode = str("mode");
      if (mode !== undefined && mode !== "read" && mode !== "write") throw new CliError(`--mode ${JSON.stringify(mode)}: use read or write`);
      return { command: { name: "release", target, kind: kind(), token, mode }, quiet, connection: connection() };
    }
    case "list":
      return {
        command: { name: "list", kind: kind(), ...(str("prefix") === undefined ? {} : { prefix: str("prefix") }) },
        quiet,
        connection: connection(),
      };
    case "force-release": {
      if (!target) throw new CliError('force-release needs a NAME: holdfast force-release NAME --reason "why"');
      const reason = str("reason");
      if (!reason) throw new CliError('force-release needs --reason "why" (it goes into the audit log)');
      const k = kind();
      if (k === "idempotency") throw new CliError("idempotency keys have no force release: use --kind mutex, rwlock, semaphore, flow or election");
      const fenceText = str("fence");
      if (fenceText !== undefined && !(/^[1-9]\d{0,15}$/.test(fenceText) && Number.isSafeInteger(Number(fenceText))))
        throw new CliError(`--fence ${JSON.stringify(fenceText)}: use the fence status showed`);
      const holder = str("holder");
      return {
        command: {
          name: "force-release",
          target,
          kind: k,
          reason,
          ...(holder === undefined ? {} : { holder }),
          ...(fenceText === undefined ? {} : { fence: Number(fenceText) }),
        },
        quiet,
        connection: connection(),
      };
    }
    case "audit": {
      const limitText = str("limit") ?? "50";
      if (!/^\d{1,3}$/.test(limitText) || Number(limitText) < 1 || Number(limitText) > 200) throw new CliError("--limit: use 1 to 200");
      return { command: { name: "audit", limit: Number(limitText) }, quiet, connection: connection() };
    }
    default:
      throw new CliError(
        `unknown command ${JSON.stringify(verb)}: use run, elect, leader, status, release, list, force-release or audit (holdfast --help)`,
      );
  }
}

/** --concurrency N and --rate COUNT/WINDOW (120/1m, 20/1s, 5/10 for ten seconds): at least one; the service checks their ranges. */
function flowLimit(concurrencyText: string | undefined, rateText: string | undefined) {
  if (concurrencyText === undefined && rateText === undefined) throw new CliError("--limit KEY needs --concurrency N, --rate COUNT/WINDOW or both");
  const limit: { concurrency?: number; rate?: { count: number; perMs: number } } = {};
  if (concurrencyText !== undefined) {
    if (!/^[1-9]\d{0,4}$/.test(concurrencyText)) throw new CliError(`--concurrency ${JSON.stringify(concurrencyText)}: use a whole number from 1`);
    limit.concurrency = Number(concurrencyText);
  }
  if (rateText !== undefined) {
    const [count, window] = rateText.split("/");
    const perMs = window === undefined ? undefined : parseDuration(window);
    if (!/^[1-9]\d{0,4}$/.test(count) || perMs === undefined)
      throw new CliError(`--rate ${JSON.stringify(rateText)}: use COUNT/WINDOW, e.g. 120/1m (at most 120 starts in any minute) or 20/1s`);
    limit.rate = { count: Number(count), perMs };
  }
  return limit;
}

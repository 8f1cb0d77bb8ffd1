#!/usr/bin/env node
import {
  HoldfastClient,
  ConflictError,
  ForbiddenError,
  InProgressError,
  InvalidRequestError,
  type Lease,
  type LeaseKind,
  LeaseLostError,
  LockedError,
  StoreUnavailableError,
  UnauthorizedError,
  UnreachableError,
  type WaitNotice,
} from "../client/index.js";
import { constants, hostname, userInfo } from "node:os";
import { formatDuration } from "./durations.js";
import { EXIT } from "./exitCodes.js";
import { HELP } from "./help.js";
import { CliError, type Command, parseCommand } from "./parseCommand.js";
import { elect, showLeader } from "./elect.js";
import { runUnderLease } from "./runUnderLease.js";

async function main(argv: string[]): Promise<number> {
  let quiet = false;
  const say = (line: string) => {
    if (!quiet) process.stderr.write(`holdfast: ${line}\n`);
  };
  try {
    const parsed = parseCommand(argv, process.env);
    quiet = parsed.quiet;
    if (parsed.command.name === "help" || !parsed.connection) {
      process.stdout.write(HELP);
      return 0;
    }
    const command = parsed.command;
    // CMD must be dead before anyone else can hold the lease: a lost lease's signal comes at least
    // the grace (SIGTERM to SIGKILL) before the lease can end, not only the client's default margin.
    const graceMs = "graceMs" in command ? command.graceMs : 0;
    const client = new HoldfastClient({
      baseUrl: parsed.connection.url,
      apiKey: parsed.connection.apiKey,
      waitChannel: parsed.connection.waitChannel,
      safetyMarginMs: marginFor(command, graceMs),
    });
    return await execute(client, command, say);
  } catch (err) {
    const [status, message] = explain(err);
    process.stderr.write(`holdfast: ${message}\n`); // errors show even with --quiet
    return status;
  }
}

/** The client's safety margin for a run: its default, or the grace and some slack when that is longer. */
function marginFor(command: Command, graceMs: number): number | undefined {
  if (command.name !== "run-lock" && command.name !== "run-slot" && command.name !== "run-once" && command.name !== "elect") return undefined;
  const fallback = Math.min(2000, Math.max(100, Math.round(command.ttlMs / 10)));
  return Math.max(fallback, graceMs + 500);
}

/**
 * A signal that reaches holdfast before CMD runs (or after it ended) stops
 * the acquire or waits for the release, rather than killing holdfast with
 * the lock still held; while CMD runs, runUnderLease forwards it to CMD.
 */
const interrupted = new AbortController();
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.on(sig, () => {
    interrupted.abort(new CliError(`stopped by ${sig} before the command ran`, 128 + (constants.signals[sig] ?? 0)));
  });
}

async function execute(client: HoldfastClient, command: Command, say: (line: string) => void): Promise<number> {
  switch (command.name) {
    case "run-lock":
    case "run-slot": {
      const lease =
        command.name === "run-lock"
          ? await lockWithin(client, command.lock, command.ttlMs, command.waitMs, command.holder ?? defaultHolder(), say)
          : await slotWithin(client, command, say);
      const name = command.name === "run-lock" ? command.lock : command.flow;
      try {
        if (interrupted.signal.aborted) throw interrupted.signal.reason;
        if (lease.signal.aborted) return EXIT.leaseLost;
        const run = await runUnderLease(lease, command.cmd, command.graceMs, say);
        return run.leaseLost ? EXIT.leaseLost : run.status;
      } finally {
        await lease.release().catch((err) => {
          if (!(err instanceof LeaseLostError)) say(`could not release ${name} (it ends at its TTL): ${(err as Error).message}`);
        });
      }
    }
    case "run-once": {
      const lease = await beginWithin(client, command.key, command, say);
      if (!lease) return 0;
      let run: Awaited<ReturnType<typeof runUnderLease>> | undefined;
      try {
        if (interrupted.signal.aborted) throw interrupted.signal.reason;
        if (lease.signal.aborted) return EXIT.leaseLost;
        run = await runUnderLease(lease, command.cmd, command.graceMs, say);
        if (run.leaseLost) return EXIT.leaseLost; // someone else may run it now: no result of ours
        if (run.status === 0) {
          await client.complete(lease, { exitCode: 0, finishedAt: new Date().toISOString() }).catch((err) => {
            if (err instanceof LeaseLostError)
              throw new CliError(`the command succeeded but the lease on ${command.key} was lost before it could be marked done`, EXIT.leaseLost);
            throw err;
          });
        }
        return run.status;
      } finally {
        // Failed, lost or not run: the key is free to run again.
        if (run?.status !== 0 || run.leaseLost) await lease.release().catch(() => undefined);
      }
    }
    case "status": {
      const shown = await statusOf(client, command.target, command.kind);
      process.stdout.write(`${JSON.stringify(shown, null, 2)}\n`);
      if (!command.kind && shown.kind === "mutex" && !shown.held && !shown.waiters)
        say(
          `no mutex ${JSON.stringify(command.target)} is held or waited on (nor an idempotency key begun); another kind? --kind rwlock or semaphore`,
        );
      return 0;
    }
    case "release": {
      const r = await client.release({ kind: command.kind, name: command.target, token: command.token, mode: command.mode }).catch((err) => {
        if (err instanceof LeaseLostError)
          throw new CliError(`that token does not hold ${command.target} (released already, or its lease ended)`, EXIT.notHeld);
        throw err;
      });
      process.stdout.write(`${JSON.stringify(r)}\n`);
      return 0;
    }
    // Operators' commands print JSON, one item per line: names and labels are user text, shown escaped.
    case "list":
      for await (const item of client.operator.listAll(command.kind, command.prefix === undefined ? {} : { prefix: command.prefix })) {
        process.stdout.write(`${JSON.stringify(item)}\n`);
      }
      return 0;
    case "force-release": {
      const { target, kind, reason, holder, fence } = command;
      const r = await client.operator.forceRelease(kind, target, { reason, holder, fence }).catch((err) => {
        if (err instanceof ForbiddenError)
          throw new CliError("this API key may not force-release: it needs an admin key (API_KEYS role admin)", EXIT.noPermission);
        if (err instanceof ConflictError && err.code === "not_held")
          throw new CliError(`${JSON.stringify(target)} is not held (${err.message}); nothing changed`, EXIT.notHeld);
        throw err;
      });
      process.stdout.write(`${JSON.stringify(r)}\n`);
      return 0;
    }
    case "elect":
      return elect(client, command, interrupted.signal, say);
    case "leader":
      return showLeader(client, command.election, command.watch, interrupted.signal);
    case "audit":
      for (const entry of (await client.operator.audit({ limit: command.limit })).entries) process.stdout.write(`${JSON.stringify(entry)}\n`);
      return 0;
    default:
      return EXIT.usage;
  }
}

/** Who this process is, as the lock's holder label: "<user>@<host> pid <pid>" (printable, at most 256 characters). */
function defaultHolder(): string {
  let user = "unknown";
  try {
    user = userInfo().username;
  } catch {}
  return `${user}@${hostname()} pid ${process.pid}`.replace(/[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/gu, "?").slice(0, 256);
}

/**
 * What status shows: the lock's state as GET answers it, named by kind. With
 * no --kind, the mutex NAME; when no mutex of that name is held or waited
 * on, the idempotency key NAME if one was begun (a `run --once` key).
 */
async function statusOf(client: HoldfastClient, name: string, kind: LeaseKind | undefined): Promise<Record<string, unknown>> {
  const state = await client.inspect(kind ?? "mutex", name);
  if (kind || state.held || state.waiters) return { kind: kind ?? "mutex", ...state };
  const key = await client.inspect("idempotency", name);
  return key.state !== "absent" ? { kind: "idempotency", ...key } : { kind: "mutex", ...state };
}

/** "someone else", or the holder's label (JSON-quoted: it is user text, checked printable by the service), and its lease's end. */
function heldBy(holder: string | null | undefined, expiresAt: number | null | undefined): string {
  const who = typeof holder === "string" ? JSON.stringify(holder) : "someone else";
  return typeof expiresAt === "number" ? `${who} until ${new Date(expiresAt).toISOString()}` : who;
}

/** The line `run` prints once when it has to wait: whom for, and how. */
function waitingLine(name: string, busy: "held" | "being run", notice: WaitNotice): string {
  return `waiting for ${name} (${busy} by ${heldBy(notice.holder, notice.expiresAt)}, over ${notice.channel === "socket" ? "a socket" : "HTTP"})`;
}

/** Takes the mutex, waiting up to waitMs, however long (the client keeps its place in line past the service's minute). */
async function lockWithin(client: HoldfastClient, name: string, ttlMs: number, waitMs: number, holder: string, say: (line: string) => void) {
  try {
    const onWait = (notice: WaitNotice) => say(waitingLine(name, "held", notice));
    return await client.lock(name, { ttlMs, waitMs, signal: interrupted.signal, holder, onWait });
  } catch (err) {
    if (interrupted.signal.aborted) throw interrupted.signal.reason;
    if (err instanceof LockedError) {
      const { holder: label, expiresAt } = err.body as { holder?: string | null; expiresAt?: number | null };
      const hint = waitMs ? `within --wait ${formatDuration(waitMs)}` : "(use --wait 1m to wait for it)";
      throw new CliError(`${name} is held by ${heldBy(label, expiresAt)}; not acquired ${hint}; not running the command`, EXIT.notAcquired);
    }
    throw err;
  }
}

/** A slot of the --limit KEY flow, waiting up to --wait: turned away, the command does not run. */
async function slotWithin(client: HoldfastClient, command: Extract<Command, { name: "run-slot" }>, say: (line: string) => void) {
  const { flow: name, concurrency, rate, ttlMs, waitMs } = command;
  try {
    const onWait = (notice: WaitNotice) => say(`waiting for a slot of ${name} (over ${notice.channel === "socket" ? "a socket" : "HTTP"})`);
    return await client.slot(name, {
      concurrency,
      rate,
      ttlMs,
      waitMs,
      signal: interrupted.signal,
      holder: command.holder ?? defaultHolder(),
      onWait,
    });
  } catch (err) {
    if (interrupted.signal.aborted) throw interrupted.signal.reason;
    if (err instanceof LockedError) {
      const hint = waitMs ? `within --wait ${formatDuration(waitMs)}` : "(use --wait 1m to wait for a slot)";
      throw new CliError(`${name} is at its limit (${err.message}); no slot ${hint}; not running the command`, EXIT.notAcquired);
    }
    throw err;
  }
}

/** Begins the --once key, waiting up to waitMs for another run of it: a lease to run under, or undefined when it was done already. */
async function beginWithin(
  client: HoldfastClient,
  key: string,
  options: { ttlMs: number; retainMs: number; waitMs: number; holder?: string },
  say: (line: string) => void,
): Promise<Lease | undefined> {
  try {
    const r = await client.begin(key, {
      ttlMs: options.ttlMs,
      retainMs: options.retainMs,
      signal: interrupted.signal,
      holder: options.holder ?? defaultHolder(),
      waitMs: options.waitMs,
      onWait: (notice) => say(waitingLine(key, "being run", notice)),
    });
    if (r.state === "started") return r.lease;
    say(`${key} was done already (at ${new Date(r.completedAt).toISOString()}); not running the command`);
    return undefined;
  } catch (err) {
    if (interrupted.signal.aborted) throw interrupted.signal.reason;
    if (!(err instanceof InProgressError)) throw err;
    const hint = options.waitMs ? `within --wait ${formatDuration(options.waitMs)}` : "(use --wait to wait for its outcome)";
    throw new CliError(`${key} is being run elsewhere right now; not running the command ${hint}`, EXIT.notAcquired);
  }
}

/** An error as an exit status and a sentence that says what to do. */
function explain(err: unknown): [number, string] {
  if (err instanceof CliError) return [err.status, err.message];
  if (err instanceof UnreachableError) return [EXIT.unavailable, `${err.message}. Is HOLDFAST_URL right, and the service up?`];
  if (err instanceof StoreUnavailableError) return [EXIT.unavailable, `the service's store did not answer (${err.message}); try again shortly`];
  if (err instanceof UnauthorizedError) return [EXIT.noPermission, "the API key was refused: check HOLDFAST_API_KEY"];
  // Refused by the service, or by the client before it was sent (a name that is not one): the same answer.
  if (err instanceof InvalidRequestError) return [EXIT.usage, `the request was refused: ${err.message} (${err.code})`];
  return [EXIT.software, `unexpected error: ${err instanceof Error ? err.message : String(err)}`];
}

main(process.argv.slice(2)).then((status) => {
  process.exitCode = status;
  // Open keep-alive connections must not hold the exit back.
  setTimeout(() => process.exit(status), 1000).unref();
});

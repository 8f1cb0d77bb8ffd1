import { type HoldfastClient, LockedError } from "../client/index.js";
import { runUnderLease } from "./runUnderLease.js";

/** How long one campaign waits in line before it campaigns again (the client keeps its place past the service's minute). */
const CAMPAIGN_WAIT_MS = 3_600_000;

export interface ElectCommand {
  election: string;
  value: string;
  ttlMs: number;
  graceMs: number;
  cmd: string[];
}

/**
 * `holdfast elect NAME --value V -- CMD`: campaigns, runs CMD only while it
 * leads (with HOLDFAST_FENCE, the term, in its environment), stops it
 * (SIGTERM, then SIGKILL after the grace) when the term is lost, and
 * campaigns again. CMD ending on its own ends holdfast with its status, after
 * a resign (the next in line leads at once); so does a signal to holdfast,
 * which goes to CMD.
 */
export async function elect(client: HoldfastClient, command: ElectCommand, stop: AbortSignal, say: (line: string) => void): Promise<number> {
  const { election, value, ttlMs, graceMs, cmd } = command;
  for (;;) {
    if (stop.aborted) throw stop.reason;
    let leadership: Awaited<ReturnType<HoldfastClient["campaign"]>>;
    try {
      leadership = await client.campaign(election, { value, ttlMs, waitMs: CAMPAIGN_WAIT_MS, signal: stop });
    } catch (err) {
      if (stop.aborted) throw stop.reason;
      if (err instanceof LockedError) continue;
      throw err;
    }
    say(`leading ${election} (term ${leadership.term}): running ${cmd[0]}`);
    try {
      if (leadership.signal.aborted) continue;
      const run = await runUnderLease(leadership.lease, cmd, graceMs, say);
      if (!run.leaseLost) return run.status;
      say(`no longer leading ${election}: campaigning again`);
    } finally {
      await leadership.resign().catch(() => undefined);
    }
  }
}

/** `holdfast leader NAME [--watch]`: who leads, as JSON; with --watch, every change after, one JSON line each, until stopped. */
export async function showLeader(client: HoldfastClient, election: string, watch: boolean, stop: AbortSignal): Promise<number> {
  process.stdout.write(`${JSON.stringify(await client.inspect("election", election))}\n`);
  if (!watch) return 0;
  const observer = client.observe(election);
  stop.addEventListener("abort", () => observer.close(), { once: true });
  for await (const change of observer) process.stdout.write(`${JSON.stringify(change)}\n`);
  return 0;
}

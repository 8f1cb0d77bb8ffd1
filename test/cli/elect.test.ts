// `holdfast elect` as two real processes (node + tsx on src/cli/main.ts) campaigning in one election, against
// the Worker served by workerd on both stores: exactly one runs CMD at a time, a resign hands over at once,
// and a leader killed outright is replaced within its TTL.
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HoldfastClient } from "../../src/client/index";
import { type Stores, startForKeys, stopAll, until } from "../support/workerServers";

const KEY = "cli-elect-key-1234567";
const MAIN = path.resolve("src/cli/main.ts");
const unique = (label: string) => `${label}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;

/** CMD: logs its start (with its pid and HOLDFAST_FENCE) and, on SIGTERM, its end, to the file in argv[1]; else runs until killed. */
const WORKER = `
const fs = require("node:fs");
const [log, id] = process.argv.slice(1);
const say = (ev) => fs.appendFileSync(log, JSON.stringify({ ev, id, pid: process.pid, term: Number(process.env.HOLDFAST_FENCE), t: Date.now() }) + "\\n");
say("start");
process.on("SIGTERM", () => { say("end"); process.exit(0); });
setInterval(() => {}, 1000);
`;

interface Event {
  ev: "start" | "end";
  id: string;
  pid: number;
  term: number;
  t: number;
}

let scratch: string;
let servers: Stores;
const children: ChildProcess[] = [];

beforeAll(async () => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), "holdfast-elect-"));
  servers = await startForKeys({ electing: KEY });
}, 120_000);

afterAll(async () => {
  for (const c of children) c.kill("SIGKILL");
  await stopAll(servers ?? {});
  fs.rmSync(scratch, { recursive: true, force: true });
});

function elect(url: string, name: string, id: string, log: string): ChildProcess {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", MAIN, "elect", name, "--value", id, "--ttl", "3s", "--grace", "1s", "--", process.execPath, "-e", WORKER, log, id],
    { env: { ...process.env, HOLDFAST_URL: url, HOLDFAST_API_KEY: KEY }, stdio: ["ignore", "ignore", "pipe"] },
  );
  children.push(child);
  return child;
}

const eventsIn = (log: string): Event[] =>
  fs.existsSync(log)
    ? fs
        .readFileSync(log, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l))
    : [];

/** No two runs of CMD overlap: each start comes after the end (or the kill, `killedAt` by pid) of the run before it. */
function expectOneAtATime(events: Event[], killedAt: Record<number, number>): void {
  let running: Event | undefined;
  let busyUntil = 0;
  for (const e of events) {
    if (e.ev === "end") {
      running = undefined;
      busyUntil = e.t;
      continue;
    }
    expect(running, `${e.id} started while ${running?.id} ran`).toBeUndefined();
    expect(e.t).toBeGreaterThanOrEqual(busyUntil);
    if (killedAt[e.pid] === undefined) running = e;
    else busyUntil = killedAt[e.pid];
  }
}

describe.each(["redis", "durable"] as const)("holdfast elect (%s store)", (store) => {
  it("two processes: one runs CMD at a time; a resign hands over at once, a killed leader within its TTL", async () => {
    const url = servers[store].url;
    const name = unique("elect");
    const log = path.join(scratch, `${name}.log`);
    const client = new HoldfastClient({ baseUrl: url, apiKey: KEY });
    const procs = { a: elect(url, name, "a", log), b: elect(url, name, "b", log) };

    const first = (
      await until(
        () => eventsIn(log),
        (e) => e.length >= 1,
      )
    )[0];
    const led = await until(
      () => client.inspect("election", name),
      (s) => s.waiters === 1,
    );
    expect(led).toMatchObject({ value: first.id, term: first.term });
    expect(eventsIn(log)).toHaveLength(1);
    const other = first.id === "a" ? "b" : "a";

    // The leader's holdfast is told to stop: CMD gets it, ends, holdfast resigns and the other leads at once.
    procs[first.id as "a" | "b"].kill("SIGTERM");
    const second = (await until(
      () => eventsIn(log).find((e) => e.ev === "start" && e.id === other),
      (e) => e !== undefined,
    )) as Event;
    const end = eventsIn(log).find((e) => e.ev === "end" && e.id === first.id) as Event;
    expect(second.t).toBeGreaterThanOrEqual(end.t);
    expect(second.term).toBeGreaterThan(first.term);

    // A third campaigner, then the leader killed outright (holdfast and CMD, as a crash would): the third leads
    // within the TTL (3 s) of the last heartbeat, never while the killed one's CMD ran.
    const third = elect(url, name, "c", log);
    await until(
      () => client.inspect("election", name),
      (s) => s.waiters === 1,
    );
    const killedAt = Date.now();
    procs[other as "a" | "b"].kill("SIGKILL");
    process.kill(-second.pid, "SIGKILL");
    const last = (await until(
      () => eventsIn(log).find((e) => e.ev === "start" && e.id === "c"),
      (e) => e !== undefined,
      15_000,
    )) as Event;
    expect(last.t - killedAt).toBeLessThan(3000 + 2000); // the TTL, and the time a busy machine takes to notice
    expect(last.term).toBeGreaterThan(second.term);
    expectOneAtATime(eventsIn(log), { [second.pid]: killedAt });
    third.kill("SIGTERM");
    await until(
      () => client.inspect("election", name),
      (s) => s.term === null,
    );
  });
});

// The `holdfast` command line as a real process (node + tsx on src/cli/main.ts), against the
// Worker served by workerd on both stores.
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { HoldfastClient } from "../../src/client/index";
import { EXIT } from "../../src/cli/exitCodes";
import { type Stores, startOnBothStores, stopAll, until } from "../support/workerServers";

const KEY = "cli-test-key-1234567";
const ADMIN_KEY = "cli-test-admin-7654321";
const MAIN = path.resolve("src/cli/main.ts");
const unique = (label: string) => `${label}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;

interface Run {
  child: ChildProcess;
  done: Promise<{ status: number | null; stderr: string; stdout: string }>;
}

/** Starts `holdfast ARGS` with HOLDFAST_URL and HOLDFAST_API_KEY set for `url` (nodeFlags: flags for node itself). */
function holdfast(url: string, args: string[], env: Record<string, string> = {}, nodeFlags: string[] = []): Run {
  const child = spawn(process.execPath, [...nodeFlags, "--import", "tsx", MAIN, ...args], {
    env: { ...process.env, HOLDFAST_URL: url, HOLDFAST_API_KEY: KEY, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d) => {
    stdout += d;
  });
  child.stderr?.on("data", (d) => {
    stderr += d;
  });
  const done = new Promise<{ status: number | null; stderr: string; stdout: string }>((resolve) =>
    child.on("close", (status) => resolve({ status, stderr, stdout })),
  );
  return { child, done };
}

let scratch: string;
let servers: Stores;

beforeAll(async () => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), "holdfast-cli-"));
  servers = await startOnBothStores(
    { API_KEYS: `cli=${KEY},cli:admin:oncall=${ADMIN_KEY}` },
    { url: inject("upstashUrl"), token: inject("upstashToken") },
  );
}, 120_000);

afterAll(async () => {
  await stopAll(servers ?? {});
  fs.rmSync(scratch, { recursive: true, force: true });
});

for (const kind of ["redis", "durable"] as const) {
  describe(`${kind} store`, () => {
    const url = () => servers[kind].url;
    const client = () => new HoldfastClient({ baseUrl: url(), apiKey: KEY });

    it("run --lock holds the lock while CMD runs, gives CMD its fence, releases after, and exits with CMD's status", async () => {
      const name = unique("run");
      const marker = path.join(scratch, `${name}.started`);
      const run = holdfast(url(), ["run", "--lock", name, "--ttl", "2s", "--", "sh", "-c", `echo "$HOLDFAST_FENCE" > ${marker}; sleep 1; exit 3`]);
      const fence = await until(
        () => (fs.existsSync(marker) ? fs.readFileSync(marker, "utf8").trim() : ""),
        (v) => v !== "",
      );
      // Held under the CLI's own label: who and which process.
      expect(await client().inspect("mutex", name)).toMatchObject({
        held: true,
        fence: Number(fence),
        holder: expect.stringMatching(/^.+@.+ pid \d+$/),
      });
      const { status } = await run.done;
      expect(status).toBe(3);
      expect((await client().inspect("mutex", name)).held).toBe(false);
    });

    it("run --lock does not run CMD when the lock is held, and says so with its own status", async () => {
      const name = unique("busy");
      const held = await client().lock(name, { ttlMs: 10_000, holder: "nightly report" });
      const marker = path.join(scratch, `${name}.ran`);
      const { status, stderr } = await holdfast(url(), ["run", "--lock", name, "--", "touch", marker]).done;
      expect(status).toBe(EXIT.notAcquired);
      // The 409 named its holder (the SDK's label), and the CLI passes it on.
      expect(stderr).toMatch(/held by "nightly report" until \d{4}-.*--wait/);
      expect(fs.existsSync(marker)).toBe(false);
      await held.release();
    });

    it("run --lock --wait waits over a socket: a holdfast killed while waiting leaves the line at once, and one on HTTP waits too", async () => {
      const name = unique("waits");
      const held = await client().lock(name, { ttlMs: 30_000 });
      const killed = holdfast(url(), ["run", "--lock", name, "--wait", "30s", "--wait-channel", "socket", "--", "true"]);
      await until(
        () => client().inspect("mutex", name),
        (s) => s.waiters === 1,
      );
      killed.child.kill("SIGKILL"); // no goodbye: only its socket's close tells the service
      await until(
        () => client().inspect("mutex", name),
        (s) => s.waiters === 0,
      );
      expect((await client().inspect("mutex", name)).waiters).toBe(0);
      const marker = path.join(scratch, `${name}.ran`);
      const overHttp = holdfast(url(), ["run", "--lock", name, "--wait", "30s", "--wait-channel", "http", "--", "touch", marker]);
      await until(
        () => client().inspect("mutex", name),
        (s) => s.waiters === 1,
      );
      await held.release();
      expect((await overHttp.done).status).toBe(0);
      expect(fs.existsSync(marker)).toBe(true);
    });

    it("run --lock --wait says once on stderr whom it waits for and how, nothing when the lock is free, and nothing with --quiet", async () => {
      const name = unique("says");
      const held = await client().lock(name, { ttlMs: 30_000, holder: "nightly report" });
      const waiting = holdfast(url(), ["run", "--lock", name, "--wait", "30s", "--wait-channel", "socket", "--", "true"]);
      const quiet = holdfast(url(), ["run", "--lock", name, "--wait", "30s", "--quiet", "--", "true"]);
      await until(
        () => client().inspect("mutex", name),
        (s) => s.waiters === 2,
      );
      await held.release();
      const [said, silent] = await Promise.all([waiting.done, quiet.done]);
      expect([said.status, silent.status]).toEqual([0, 0]);
      const until_ = new Date(held.expiresAt).toISOString();
      expect(said.stderr).toBe(`holdfast: waiting for ${name} (held by "nightly report" until ${until_}, over a socket)\n`);
      expect(silent.stderr).toBe("");
      const free = await holdfast(url(), ["run", "--lock", name, "--wait", "30s", "--", "true"]).done;
      expect([free.status, free.stderr]).toEqual([0, ""]);
    });

    it("status says which kind it shows: a --once key's state when no mutex of that name is in use, else the mutex and a --kind hint", async () => {
      const key = unique("status-once");
      expect((await holdfast(url(), ["run", "--once", key, "--", "true"]).done).status).toBe(0);
      const once = await holdfast(url(), ["status", key]).done;
      expect(JSON.parse(once.stdout)).toMatchObject({ kind: "idempotency", state: "completed" });
      const unused = await holdfast(url(), ["status", unique("nothing")]).done;
      expect(JSON.parse(unused.stdout)).toMatchObject({ kind: "mutex", held: false });
      expect(unused.stderr).toMatch(/--kind rwlock or semaphore/);
      const asked = await holdfast(url(), ["status", key, "--kind", "mutex"]).done;
      expect(JSON.parse(asked.stdout)).toMatchObject({ kind: "mutex", held: false });
    });

    it("run --lock stops CMD (SIGTERM) when the lease is lost, and exits with the lease-lost status", async () => {
      const name = unique("lost");
      const tokenFile = path.join(scratch, `${name}.token`);
      const termFile = path.join(scratch, `${name}.term`);
      const script = `echo "$HOLDFAST_TOKEN" > ${tokenFile}; trap 'echo term > ${termFile}; exit 143' TERM; while :; do sleep 0.05; done`;
      const run = holdfast(url(), ["run", "--lock", name, "--ttl", "2s", "--grace", "500ms", "--", "sh", "-c", script]);
      const token = await until(
        () => (fs.existsSync(tokenFile) ? fs.readFileSync(tokenFile, "utf8").trim() : ""),
        (v) => v !== "",
      );
      // An operator takes the lock away: the next heartbeat hears lease_lost.
      await client().release({ kind: "mutex", name, token });
      const { status, stderr } = await run.done;
      expect(status).toBe(EXIT.leaseLost);
      expect(stderr).toMatch(/lease on .* was lost/);
      expect(fs.readFileSync(termFile, "utf8").trim()).toBe("term");
    });

    it("a lost lease stops the whole command: its children too, not only the shell", async () => {
      const name = unique("group");
      const tokenFile = path.join(scratch, `${name}.token`);
      const childPid = path.join(scratch, `${name}.pid`);
      const script = `sleep 60 & echo $! > ${childPid}; echo "$HOLDFAST_TOKEN" > ${tokenFile}; wait`;
      const run = holdfast(url(), ["run", "--lock", name, "--ttl", "2s", "--grace", "500ms", "--", "sh", "-c", script]);
      const token = await until(
        () => (fs.existsSync(tokenFile) ? fs.readFileSync(tokenFile, "utf8").trim() : ""),
        (v) => v !== "",
      );
      const pid = Number(fs.readFileSync(childPid, "utf8").trim());
      await client().release({ kind: "mutex", name, token });
      expect((await run.done).status).toBe(EXIT.leaseLost);
      const alive = () => {
        try {
          process.kill(pid, 0);
          return true;
        } catch {
          return false;
        }
      };
      expect(await until(alive, (a) => !a, 3000)).toBe(false);
    });

    it("run --limit holds to the rate: past --rate 2/15s a run without --wait does not run, one with --wait runs when the window admits it", async () => {
      const name = unique("limit");
      const times = path.join(scratch, `${name}.times`);
      const record = ["node", "-e", `require("fs").appendFileSync(${JSON.stringify(times)}, Date.now() + "\\n")`];
      const run = (...flags: string[]) =>
        holdfast(url(), ["run", "--limit", name, "--concurrency", "5", "--rate", "2/15s", ...flags, "--", ...record]).done;
      // A window long enough to outlast a few CLI starts on a loaded machine (each spawns node and tsx).
      expect((await Promise.all([run(), run()])).map((r) => r.status)).toEqual([0, 0]);
      const turned = await run();
      expect(turned.status).toBe(EXIT.notAcquired);
      expect(turned.stderr).toMatch(/at its limit \(the rate is used up: 2 starts in the last 15000 ms\); no slot .*not running the command/);
      expect((await run("--wait", "30s")).status).toBe(0);
      const ran = fs.readFileSync(times, "utf8").trim().split("\n").map(Number);
      expect(ran).toHaveLength(3);
      ran.sort((a, b) => a - b);
      expect(ran[2] - ran[0]).toBeGreaterThanOrEqual(13_000); // the first start had to leave the window
      expect(await client().inspect("flow", name)).toMatchObject({ limit: { concurrency: 5, rate: { count: 2, perMs: 15_000 } }, held: 0 });
    });

    it("run --once runs CMD once across two concurrent invocations; a later one says it was done and exits 0", async () => {
      const key = unique("once");
      const log = path.join(scratch, `${key}.log`);
      const args = ["run", "--once", key, "--wait", "20s", "--", "sh", "-c", `echo ran >> ${log}; sleep 1`];
      const [a, b] = await Promise.all([holdfast(url(), args).done, holdfast(url(), args).done]);
      expect([a.status, b.status]).toEqual([0, 0]);
      expect(fs.readFileSync(log, "utf8")).toBe("ran\n");
      const later = await holdfast(url(), args).done;
      expect(later.status).toBe(0);
      expect(later.stderr).toMatch(/was done already/);
      expect(fs.readFileSync(log, "utf8")).toBe("ran\n");
    });

    it("run --once frees the key when CMD fails, so the next run runs it", async () => {
      const key = unique("once-fail");
      expect((await holdfast(url(), ["run", "--once", key, "--", "sh", "-c", "exit 4"]).done).status).toBe(4);
      expect((await holdfast(url(), ["run", "--once", key, "--", "true"]).done).status).toBe(0);
      expect(await client().inspect("idempotency", key)).toMatchObject({ state: "completed" });
    });

    it("status shows a lock without its token; release by token frees it", async () => {
      const name = unique("ops");
      const lease = await client().lock(name, { ttlMs: 10_000 });
      const shown = await holdfast(url(), ["status", name]).done;
      expect(shown.status).toBe(0);
      expect(JSON.parse(shown.stdout)).toMatchObject({ held: true, fence: lease.fence });
      expect(shown.stdout).not.toContain(lease.token);
      const released = await holdfast(url(), ["release", name, "--token", lease.token]).done;
      expect(released.status).toBe(0);
      expect((await client().inspect("mutex", name)).held).toBe(false);
      const again = await holdfast(url(), ["release", name, "--token", lease.token]).done;
      expect(again.status).toBe(1);
      expect(again.stderr).toMatch(/does not hold/);
    });

    it("list shows held locks as JSON lines; force-release needs an admin key, frees the lock and is in the audit log", async () => {
      const prefix = unique("ops");
      const lease = await client().lock(`${prefix}-a`, { ttlMs: 30_000, holder: 'job "<b>" pid 1' });
      const listed = await holdfast(url(), ["list", "--prefix", prefix]).done;
      expect(listed.status).toBe(0);
      const items = listed.stdout
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line));
      expect(items).toEqual([expect.objectContaining({ name: `${prefix}-a`, held: true, holder: 'job "<b>" pid 1', fence: lease.fence })]);

      const refused = await holdfast(url(), ["force-release", `${prefix}-a`, "--reason", "stuck"]).done;
      expect(refused.status).toBe(EXIT.noPermission);
      expect(refused.stderr).toMatch(/admin key/);
      expect((await client().inspect("mutex", `${prefix}-a`)).held).toBe(true);

      const forced = await holdfast(url(), ["force-release", `${prefix}-a`, "--reason", "host gone", "--fence", String(lease.fence)], {
        HOLDFAST_API_KEY: ADMIN_KEY,
      }).done;
      expect(forced.status).toBe(0);
      expect(JSON.parse(forced.stdout)).toMatchObject({ released: 1, fence: lease.fence, holder: 'job "<b>" pid 1' });
      expect((await client().inspect("mutex", `${prefix}-a`)).held).toBe(false);
      const none = await holdfast(url(), ["force-release", `${prefix}-a`, "--reason", "again"], { HOLDFAST_API_KEY: ADMIN_KEY }).done;
      expect(none.status).toBe(1);
      expect(none.stderr).toMatch(/not held/);

      const audit = await holdfast(url(), ["audit", "--limit", "5"]).done;
      const entries = audit.stdout
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line));
      expect(entries).toContainEqual(expect.objectContaining({ name: `${prefix}-a`, keyName: "oncall", reason: "host gone", fence: lease.fence }));
      expect(audit.stdout).not.toContain(ADMIN_KEY);
    });
  });
}

describe("usage", () => {
  it("--help reads like a man page's synopsis and exits 0", async () => {
    const { status, stdout } = await holdfast("http://127.0.0.1:1", ["--help"]).done;
    expect(status).toBe(0);
    expect(stdout).toMatch(/^Usage:\n\s+holdfast run --lock NAME/);
    expect(stdout).toMatch(/Exit status:/);
  });

  it("says what to do about a bad duration, a missing command, a missing URL or an unreachable service", async () => {
    const bad = await holdfast(servers.durable.url, ["run", "--lock", "x", "--ttl", "ten", "--", "true"]).done;
    expect(bad.status).toBe(EXIT.usage);
    expect(bad.stderr).toMatch(/--ttl "ten" is not a duration: use 500ms, 30s/);
    const grace = await holdfast(servers.durable.url, ["run", "--lock", "x", "--ttl", "10s", "--grace", "5s", "--", "true"]).done;
    expect(grace.status).toBe(EXIT.usage);
    expect(grace.stderr).toMatch(/--grace 5s must be under half of --ttl 10s/);
    // A stray word (a value with a space, unquoted) is refused, not dropped: CMD does not run.
    const stray = await holdfast(servers.durable.url, ["run", "--lock", "x", "--ttl", "30", "seconds", "--", "echo", "ran"]).done;
    expect(stray.status).toBe(EXIT.usage);
    expect(stray.stderr).toMatch(/unexpected "seconds": run takes no NAME/);
    expect(stray.stdout).not.toMatch(/ran/);
    const noCmd = await holdfast(servers.durable.url, ["run", "--lock", "x"]).done;
    expect(noCmd.status).toBe(EXIT.usage);
    expect(noCmd.stderr).toMatch(/holdfast run --lock x -- CMD/);
    const noUrl = await holdfast("", ["status", "x"], { HOLDFAST_URL: "" }).done;
    expect(noUrl.status).toBe(EXIT.config);
    expect(noUrl.stderr).toMatch(/set HOLDFAST_URL/);
    const down = await holdfast("http://127.0.0.1:1", ["status", "x"]).done;
    expect(down.status).toBe(EXIT.unavailable);
    expect(down.stderr).toMatch(/Is HOLDFAST_URL right/);
    const channel = await holdfast(servers.durable.url, ["run", "--lock", "x", "--wait-channel", "pigeon", "--", "true"]).done;
    expect(channel.status).toBe(EXIT.usage);
    expect(channel.stderr).toMatch(/--wait-channel "pigeon": use auto, socket, http/);
    const badKey = await holdfast(servers.durable.url, ["status", "x"], { HOLDFAST_API_KEY: "wrong-key-123" }).done;
    expect(badKey.status).toBe(EXIT.noPermission);
  });

  it("--wait-channel socket on a Node without WebSocket is bad usage that names the channels that work", async () => {
    // Node 22+ without its WebSocket, as Node 20 is.
    const noSocket = await holdfast(servers.durable.url, ["run", "--lock", "x", "--wait-channel", "socket", "--", "true"], {}, [
      "--no-experimental-websocket",
    ]).done;
    expect(noSocket.status).toBe(EXIT.usage);
    expect(noSocket.stderr).toMatch(/--wait-channel socket: this Node \(v[\d.]+\) has no WebSocket .*: use --wait-channel auto or http/);
  });

  it("every exit status is in --help and in the README's command-line section", async () => {
    const { stdout } = await holdfast("http://127.0.0.1:1", ["--help"]).done;
    const readme = fs.readFileSync("README.md", "utf8");
    const section = readme.slice(readme.indexOf("## The command line"), readme.indexOf("\n## ", readme.indexOf("## The command line") + 1));
    for (const code of Object.values(EXIT)) {
      expect(stdout).toMatch(new RegExp(`^  ${code} `, "m"));
      expect(section).toMatch(new RegExp(`\\b${code}\\b`));
    }
    expect(section).toMatch(/128\+N/);
  });

  it("npm run holdfast -- ARGS runs it from the clone", async () => {
    const child = spawn("npm", ["run", "-s", "holdfast", "--", "--help"], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    const status = await new Promise((resolve) => child.on("close", resolve));
    expect(status).toBe(0);
    expect(stdout).toMatch(/^Usage:\n\s+holdfast run --lock NAME/);
  });
});

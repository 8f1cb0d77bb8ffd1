// The operator console (/console) in a real browser (Chromium, headless),
// against the Worker served by workerd over TCP on both stores: what an
// operator sees of locks taken through the HTTP API, that user text stays
// text, that only admin keys are offered (and granted) force release, and
// that the page runs under its CSP without a single violation.
import fs from "node:fs";
import path from "node:path";
import type { Browser, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { launchBrowser, watchProblems } from "../support/browser";
import { httpClient } from "../support/http";
import { type Stores, startOnBothStores, stopAll } from "../support/workerServers";

const USER_KEY = "key-user-aaaa";
const ADMIN_KEY = "key-admin-aaaa";
const API_KEYS = `tenant-a=${USER_KEY},tenant-a:admin:ops-admin=${ADMIN_KEY}`;
const ROOT = path.resolve(import.meta.dirname, "../..");
const SEEN = { timeout: 10_000 };

const unique = (label: string) => `${label}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;

let servers: Stores;
let browser: Browser;

beforeAll(async () => {
  // Chromium may need installing (apt-get, as root) on a fresh machine: minutes, once.
  [servers, browser] = await Promise.all([
    startOnBothStores({ API_KEYS }, { url: inject("upstashUrl"), token: inject("upstashToken") }),
    launchBrowser(),
  ]);
}, 600_000);

afterAll(async () => {
  await browser?.close();
  await stopAll(servers ?? {});
});

/** A signed-in console tab: the page, and what it complained about so far. */
interface Session {
  page: Page;
  problems: string[];
  close: () => Promise<void>;
}

async function openConsole(base: string, key: string, width = 1400): Promise<Session> {
  const context = await browser.newContext({ viewport: { width, height: 900 } });
  const page = await context.newPage();
  const problems = await watchProblems(page);
  await page.goto(`${base}/console`);
  await page.getByLabel("API key").fill(key);
  await page.getByLabel("API key").press("Enter");
  await page.locator("#who-role").filter({ hasText: /\S/ }).waitFor(SEEN);
  return { page, problems, close: () => context.close() };
}

/** Shows only names starting with `prefix`, as an operator would narrow the list. */
async function filterBy(page: Page, prefix: string) {
  await page.getByLabel("Name starts with").fill(prefix);
  await page.getByRole("button", { name: "Filter" }).click();
}

const kindSection = (page: Page, title: string) =>
  page.locator("section.kind").filter({ has: page.getByRole("heading", { name: new RegExp(`^${title}`) }) });

/** The text of one cell of a lock's row, by the column's heading, as it is now (null while the row is not there). */
async function cell(page: Page, kindTitle: string, name: string, column: string): Promise<string | null> {
  const section = kindSection(page, kindTitle);
  const headings = await section.locator("thead th").allTextContents();
  const row = section.locator("tbody tr").filter({ has: page.getByRole("button", { name, exact: true }) });
  if ((await row.count()) === 0) return null;
  return row.locator("th, td").nth(headings.indexOf(column)).textContent();
}

function rowButton(page: Page, kindTitle: string, name: string): Locator {
  return kindSection(page, kindTitle).getByRole("button", { name, exact: true });
}

const detail = (page: Page) => page.locator("#detail");

/** The detail panel's value for a field, as it is now. */
const field = (page: Page, label: string) =>
  detail(page)
    .locator("dl > div")
    .filter({ has: page.locator("dt", { hasText: new RegExp(`^${label}$`) }) })
    .locator("dd")
    .textContent();

/** A POST whose answer comes later (a waiter held open): started now, awaited by the caller. */
const waitInLine = (base: string, name: string, holder: string) =>
  httpClient(base, USER_KEY).post(`/v1/locks/${name}/acquire`, { ttlMs: 30_000, waitMs: 20_000, holder });

function expectNoProblems(session: Session) {
  expect(session.problems, session.problems.join("\n")).toEqual([]);
}

describe.each(["redis", "durable"] as const)("%s store", (store) => {
  const base = () => servers[store].url;
  const user = () => httpClient(base(), USER_KEY);

  it("shows an election with its leader's value, term and line", async () => {
    const name = unique("console-el");
    const led = await user().post(`/v1/elections/${name}/campaign`, { ttlMs: 30_000, value: "10.0.0.7:8080" });
    expect(led.status).toBe(200);
    const s = await openConsole(base(), USER_KEY);
    try {
      await filterBy(s.page, name);
      await expect.poll(() => cell(s.page, "Elections", name, "Leader's value"), SEEN).toBe("10.0.0.7:8080");
      expect(await cell(s.page, "Elections", name, "Term")).toBe(String(led.body.fence));
      expect(await cell(s.page, "Elections", name, "In line")).toBe("0");
      // Its detail: when the term began as a time (a countdown to a start read "in ended"), and the lease's end with its countdown.
      await rowButton(s.page, "Elections", name).click();
      const since = (await user().get(`/v1/elections/${name}`)).body.since as number;
      await expect.poll(() => field(s.page, "Leading since \\(UTC\\)"), SEEN).toBe(new Date(since).toISOString().replace("T", " ").replace("Z", ""));
      expect(await field(s.page, "Lease ends at")).toMatch(/ UTC \(in \d+\.\d s\)$/);
      expect(await detail(s.page).textContent()).not.toMatch(/in ended/);
      await user().post(`/v1/elections/${name}/resign`, { token: led.body.token });
      expectNoProblems(s);
    } finally {
      await s.close();
    }
  });

  it("shows a held mutex with its holder's label, and its waiter as it joins the line", async () => {
    const name = unique("console-mx");
    const held = await user().post(`/v1/locks/${name}/acquire`, { ttlMs: 30_000, holder: "report-worker@host-3 pid 4121" });
    expect(held.status).toBe(200);
    const s = await openConsole(base(), USER_KEY);
    try {
      await expect.poll(() => s.page.locator("#who-namespace").textContent()).toBe("tenant-a");
      expect(await s.page.locator("#who-role").textContent()).toBe("user");
      await filterBy(s.page, name);
      await expect.poll(() => cell(s.page, "Mutexes", name, "Holder"), SEEN).toBe("report-worker@host-3 pid 4121");
      expect(await cell(s.page, "Mutexes", name, "Waiters")).toBe("0");
      expect(await cell(s.page, "Mutexes", name, "Fence")).toBe(String(held.body.fence));
      expect(await cell(s.page, "Mutexes", name, "Expires in")).toMatch(/^\d+\.\d s$/);

      const waiter = waitInLine(base(), name, "next-in-line");
      await expect.poll(() => cell(s.page, "Mutexes", name, "Waiters"), SEEN).toBe("1");
      // The holder releases: the waiter holds it now, and the console says so.
      expect((await user().post(`/v1/locks/${name}/release`, { token: held.body.token })).status).toBe(200);
      const granted = await waiter;
      expect(granted.status).toBe(200);
      await expect.poll(() => cell(s.page, "Mutexes", name, "Holder"), SEEN).toBe("next-in-line");
      expect(await cell(s.page, "Mutexes", name, "Waiters")).toBe("0");
      await user().post(`/v1/locks/${name}/release`, { token: granted.body.token });

      // Signing out forgets the key: nothing in session storage, and it never was in the URL.
      expect(s.page.url()).not.toContain(USER_KEY);
      await s.page.getByRole("button", { name: "Sign out" }).click();
      await s.page.getByLabel("API key").waitFor(SEEN);
      expect(await s.page.evaluate(() => sessionStorage.length)).toBe(0);
      expectNoProblems(s);
    } finally {
      await s.close();
    }
  });

  it("shows a holder label that looks like markup as the text it is", async () => {
    const name = unique("console-xss");
    const label = "<img src=x onerror=alert(1)>";
    const held = await user().post(`/v1/locks/${name}/acquire`, { ttlMs: 30_000, holder: label });
    expect(held.status).toBe(200);
    const s = await openConsole(base(), USER_KEY);
    try {
      await filterBy(s.page, name);
      await expect.poll(() => cell(s.page, "Mutexes", name, "Holder"), SEEN).toBe(label);
      await rowButton(s.page, "Mutexes", name).click();
      await expect.poll(() => field(s.page, "Holder"), SEEN).toBe(label);
      expect(await s.page.locator("img").count()).toBe(0);
      expectNoProblems(s); // no dialog either
      await user().post(`/v1/locks/${name}/release`, { token: held.body.token });
    } finally {
      await s.close();
    }
  });

  it("offers a user key no force release, and the service refuses it one (403)", async () => {
    const name = unique("console-user");
    const held = await user().post(`/v1/locks/${name}/acquire`, { ttlMs: 30_000, holder: "someone" });
    const s = await openConsole(base(), USER_KEY);
    try {
      await filterBy(s.page, name);
      // By keyboard alone: Enter on the name opens the panel, Tab reaches Close, and closing gives the focus back.
      await rowButton(s.page, "Mutexes", name).focus();
      await s.page.keyboard.press("Enter");
      await expect.poll(() => field(s.page, "Holder"), SEEN).toBe("someone");
      await s.page.keyboard.press("Tab");
      await s.page.keyboard.press("Enter");
      await detail(s.page).waitFor({ state: "hidden", ...SEEN });
      expect(await s.page.evaluate("document.activeElement.textContent")).toBe(name);
      await rowButton(s.page, "Mutexes", name).click();
      await expect.poll(() => field(s.page, "Holder"), SEEN).toBe("someone");
      expect(await s.page.getByRole("button", { name: "Force release" }).count()).toBe(0);
      expect(await s.page.getByRole("heading", { name: "Force release" }).isVisible()).toBe(false);
      const refused = await user().post(`/v1/locks/${name}/force-release`, { reason: "trying" });
      expect(refused.status).toBe(403);
      expect(refused.body.error).toBe("forbidden");
      await expect.poll(() => cell(s.page, "Mutexes", name, "Holder"), SEEN).toBe("someone");
      expectNoProblems(s);
      await user().post(`/v1/locks/${name}/release`, { token: held.body.token });
    } finally {
      await s.close();
    }
  });

  it("lets an admin key force-release a mutex to its waiter, with the reason in the audit log", async () => {
    const name = unique("console-force");
    const held = await user().post(`/v1/locks/${name}/acquire`, { ttlMs: 60_000, holder: "stuck-job@host-9" });
    const waiter = waitInLine(base(), name, "rescuer@host-2");
    const s = await openConsole(base(), ADMIN_KEY);
    try {
      expect(await s.page.locator("#who-key").textContent()).toBe("ops-admin");
      expect(await s.page.locator("#who-role").textContent()).toBe("admin");
      await filterBy(s.page, name);
      await expect.poll(() => cell(s.page, "Mutexes", name, "Waiters"), SEEN).toBe("1");
      await rowButton(s.page, "Mutexes", name).click();
      await expect.poll(() => field(s.page, "Holder"), SEEN).toBe("stuck-job@host-9");

      await s.page.getByLabel("Reason (required)").fill("job hung after the deploy; <b>not</b> markup");
      await s.page.getByRole("button", { name: "Force release" }).click();
      await expect.poll(() => s.page.locator("#status").textContent(), SEEN).toMatch(/^Force released mutex .*: 1 holder freed/);
      const granted = await waiter;
      expect(granted.status).toBe(200);
      await expect.poll(() => cell(s.page, "Mutexes", name, "Holder"), SEEN).toBe("rescuer@host-2");
      expect((await user().post(`/v1/locks/${name}/release`, { token: held.body.token })).body.error).toBe("lease_lost");
      // The panel's recent events, then the audit log view.
      await expect.poll(() => detail(s.page).locator("#detail-events").textContent(), SEEN).toContain("job hung after the deploy; <b>not</b> markup");
      await s.page.getByRole("button", { name: "Audit log" }).click();
      const entry = s.page.locator("#audit-table tbody tr").filter({ has: s.page.getByRole("rowheader", { name, exact: true }) });
      await entry.waitFor(SEEN);
      expect(await entry.locator("td, th").allTextContents()).toEqual([
        expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}$/),
        "ops-admin",
        "mutex",
        name,
        "stuck-job@host-9",
        String(held.body.fence),
        "1",
        "job hung after the deploy; <b>not</b> markup",
      ]);
      expect(await s.page.locator("b").count()).toBe(0);
      expectNoProblems(s);
      await user().post(`/v1/locks/${name}/release`, { token: granted.body.token });
    } finally {
      await s.close();
    }
  });

  it("force-releases an election's leader only in the term shown: a leader that came meanwhile is left alone", async () => {
    const name = unique("console-el-force");
    const a = (await user().post(`/v1/elections/${name}/campaign`, { ttlMs: 60_000, value: "leader-a" })).body;
    const b = user().post(`/v1/elections/${name}/campaign`, { ttlMs: 60_000, waitMs: 20_000, value: "leader-b" });
    const s = await openConsole(base(), ADMIN_KEY);
    try {
      await filterBy(s.page, name);
      await expect.poll(() => cell(s.page, "Elections", name, "In line"), SEEN).toBe("1");
      await rowButton(s.page, "Elections", name).click();
      await expect.poll(() => field(s.page, "Term"), SEEN).toBe(String(a.fence));
      // The leader hands over while the operator's force release is on its way: the term on screen is over.
      let bLeads: { fence: number; token: string } | undefined;
      await s.page.route(`**/v1/elections/${name}/force-release`, async (route) => {
        await user().post(`/v1/elections/${name}/resign`, { token: a.token });
        bLeads = (await b).body;
        await route.continue();
      });
      await s.page.getByLabel("Reason (required)").fill("leader stuck");
      await s.page.getByRole("button", { name: "Force release" }).click();
      await expect.poll(() => s.page.locator("#fr-error").textContent(), SEEN).toMatch(/^Not released: /);
      expect((await user().get(`/v1/elections/${name}`)).body).toMatchObject({ value: "leader-b", term: bLeads?.fence });
      await user().post(`/v1/elections/${name}/resign`, { token: bLeads?.token });
    } finally {
      await s.close();
    }
  });

  it("lists every kind, and force-releases one semaphore holder by its label", async () => {
    const prefix = unique("console-kinds");
    const [sem, rw, idem] = [`${prefix}.sem`, `${prefix}.rw`, `${prefix}.idem`];
    const a = await user().post(`/v1/semaphores/${sem}/acquire`, { limit: 3, ttlMs: 30_000, holder: "renderer-a" });
    const b = await user().post(`/v1/semaphores/${sem}/acquire`, { limit: 3, ttlMs: 30_000, holder: "renderer-b" });
    const r = await user().post(`/v1/rwlocks/${rw}/read/acquire`, { ttlMs: 30_000, holder: "reader-1" });
    const i = await user().post(`/v1/idempotency/${idem}/begin`, { ttlMs: 30_000, holder: "webhook-7" });
    const flow = `${prefix}.flow`;
    const f = await user().post(`/v1/flows/${flow}/acquire`, { concurrency: 4, rate: { count: 120, perMs: 60_000 }, ttlMs: 30_000 });
    expect([a.status, b.status, r.status, i.status, f.status]).toEqual([200, 200, 200, 201, 200]);
    const s = await openConsole(base(), ADMIN_KEY);
    try {
      await filterBy(s.page, prefix);
      await expect.poll(() => cell(s.page, "Semaphores", sem, "Permits used"), SEEN).toBe("2 of 3");
      expect(await cell(s.page, "Semaphores", sem, "Holders")).toBe("2 holders");
      expect(await cell(s.page, "Read-write locks", rw, "Mode")).toBe("read");
      expect(await cell(s.page, "Read-write locks", rw, "Holders")).toBe("reader-1");
      // The many-holder kinds say when their first lease ends, as the mutex does.
      expect(await cell(s.page, "Read-write locks", rw, "Expires in")).toMatch(/^\d+\.\d s$/);
      expect(await cell(s.page, "Semaphores", sem, "Expires in")).toMatch(/^\d+\.\d s$/);
      expect(await cell(s.page, "Idempotency keys", idem, "State")).toBe("started");
      expect(await cell(s.page, "Idempotency keys", idem, "Holder")).toBe("webhook-7");
      expect(await cell(s.page, "Flow limits", flow, "Limit")).toBe("4 at once, 120 per 60000 ms");
      expect(await cell(s.page, "Flow limits", flow, "Slots held")).toBe("1 of 4");
      expect(await cell(s.page, "Flow limits", flow, "Starts in window")).toBe("1 of 120");

      // Idempotency keys cannot be force-released: the panel does not offer it.
      await rowButton(s.page, "Idempotency keys", idem).click();
      await expect.poll(() => field(s.page, "Holder"), SEEN).toBe("webhook-7");
      expect(await s.page.getByRole("button", { name: "Force release" }).isVisible()).toBe(false);

      await rowButton(s.page, "Semaphores", sem).click();
      await expect.poll(() => field(s.page, "Holders"), SEEN).toBe("2");
      await s.page.getByLabel("Holder label (empty: release every holder)").fill("renderer-a");
      await s.page.getByLabel("Reason (required)").fill("renderer-a is wedged");
      await s.page.getByRole("button", { name: "Force release" }).click();
      await expect.poll(() => s.page.locator("#status").textContent(), SEEN).toMatch(/: 1 holder freed/);
      await expect.poll(() => cell(s.page, "Semaphores", sem, "Holder labels"), SEEN).toBe("renderer-b");
      // Nothing left of that label: the service says why, and the panel shows it.
      await s.page.getByLabel("Holder label (empty: release every holder)").fill("renderer-a");
      await s.page.getByLabel("Reason (required)").fill("again");
      await s.page.getByRole("button", { name: "Force release" }).click();
      await expect.poll(() => s.page.locator("#fr-error").textContent(), SEEN).toMatch(/^Not released: ./);
      s.problems.splice(0, s.problems.length, ...s.problems.filter((p) => !/status of 409/.test(p)));
      expectNoProblems(s);
    } finally {
      await s.close();
    }
  });

  it("follows the open lock over its watch socket, and stops offering force release once the lock was freed meanwhile", async () => {
    const name = unique("console-watched");
    const held = await user().post(`/v1/locks/${name}/acquire`, { ttlMs: 60_000, holder: "watched <i>job</i>" });
    const s = await openConsole(base(), ADMIN_KEY);
    const lockReads: string[] = [];
    const auditReads: string[] = [];
    s.page.on("request", (r) => {
      const { pathname } = new URL(r.url());
      if (pathname === `/v1/locks/${name}`) lockReads.push(pathname);
      if (pathname === "/v1/audit") auditReads.push(pathname);
    });
    let statesPushed = 0;
    s.page.on("websocket", (ws) => ws.on("framereceived", (f) => void (String(f.payload).includes('"type":"state"') && statesPushed++)));
    /** Resolves once the panel has refreshed `n` more times (it reads the audit log on each). */
    const refreshes = async (n: number) => {
      const before = auditReads.length;
      await expect.poll(() => auditReads.length - before, SEEN).toBeGreaterThanOrEqual(n);
    };
    try {
      await filterBy(s.page, name);
      await rowButton(s.page, "Mutexes", name).click();
      await expect.poll(() => field(s.page, "Holder"), SEEN).toBe("watched <i>job</i>");
      const forceRelease = s.page.getByRole("button", { name: "Force release" });
      expect(await forceRelease.isVisible()).toBe(true);
      // The panel refreshes the audit log each second; once its watch socket has pushed the lock's state (and a
      // refresh begun before that has ended), the state comes over the socket and is not read again. Counted from
      // the first push, not from the click: on a busy machine the socket may open after a refresh or two.
      await expect.poll(() => statesPushed, SEEN).toBeGreaterThanOrEqual(1);
      await refreshes(1);
      const readsWatched = lockReads.length;
      await refreshes(2);
      expect(lockReads.length).toBe(readsWatched);
      // Freed by its holder meanwhile: the panel says so and no longer offers a force release.
      expect((await user().post(`/v1/locks/${name}/release`, { token: held.body.token })).status).toBe(200);
      await expect.poll(() => field(s.page, "State"), SEEN).toBe("free");
      expect(await forceRelease.isVisible()).toBe(false);
      expect(await s.page.locator("i").count()).toBe(0);
      expectNoProblems(s);
    } finally {
      await s.close();
    }
  });

  it("keeps names and fences whole at 400 px wide (the table scrolls instead)", async () => {
    const prefix = unique("console-narrow-lock-name");
    const [mx, rw, sem] = [`${prefix}.mx`, `${prefix}.rw`, `${prefix}.sem`];
    await user().post(`/v1/locks/${mx}/acquire`, { ttlMs: 30_000, holder: "narrow" });
    await user().post(`/v1/rwlocks/${rw}/write/acquire`, { ttlMs: 30_000 });
    await user().post(`/v1/semaphores/${sem}/acquire`, { limit: 2, ttlMs: 30_000 });
    const s = await openConsole(base(), USER_KEY, 400);
    try {
      await filterBy(s.page, prefix);
      await expect.poll(() => cell(s.page, "Mutexes", mx, "Holder"), SEEN).toBe("narrow");
      await expect.poll(() => cell(s.page, "Semaphores", sem, "Permits used"), SEEN).toBe("1 of 2");
      // The lines each name's and fence's text is laid out on: one, or the word was broken.
      const lines: Array<{ text: string; lines: number }> = await s.page.evaluate(`
        [...document.querySelectorAll("section.kind tbody tr")].flatMap((row) => {
          const heads = [...row.closest("table").tHead.rows[0].cells].map((c) => c.textContent);
          const fence = heads.indexOf("Fence");
          return [row.querySelector("th button"), fence >= 0 ? row.cells[fence] : null].filter(Boolean).map((c) => {
            const range = document.createRange();
            range.selectNodeContents(c);
            return { text: c.textContent, lines: new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size };
          });
        })`);
      expect(lines.length).toBeGreaterThanOrEqual(5);
      for (const l of lines) expect(l).toEqual({ text: l.text, lines: 1 });
      expectNoProblems(s);
    } finally {
      await s.close();
    }
  });

  it("pages a long list with More", async () => {
    const prefix = unique("console-many");
    const names = Array.from({ length: 26 }, (_, n) => `${prefix}-${String(n).padStart(2, "0")}`);
    for (const name of names) await user().post(`/v1/locks/${name}/acquire`, { ttlMs: 30_000 });
    const s = await openConsole(base(), USER_KEY);
    try {
      await filterBy(s.page, prefix);
      const rows = kindSection(s.page, "Mutexes").locator("tbody tr");
      await expect.poll(() => rows.count(), SEEN).toBe(25);
      await s.page.getByRole("button", { name: "More mutexes" }).click();
      await expect.poll(() => rows.count(), SEEN).toBe(26);
      // The next refreshes keep both pages: a lock taken now shows only through a refresh, and
      // beside all the others (one that went back to one page would show 25 and More).
      await user().post(`/v1/locks/${prefix}-26/acquire`, { ttlMs: 30_000 });
      await expect.poll(() => rows.count(), SEEN).toBe(27);
      expect(await kindSection(s.page, "Mutexes").locator(".count").textContent()).toBe("(27)");
      expect(await s.page.getByRole("button", { name: "More mutexes" }).isVisible()).toBe(false);
      expectNoProblems(s);
    } finally {
      await s.close();
    }
  });
});

describe("console page", () => {
  const base = () => servers.durable.url;

  it("is served with its security headers, from /console and /console/", async () => {
    for (const p of ["/console", "/console/", "/console/console.js", "/console/console.css"]) {
      const res = await fetch(`${base()}${p}`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-security-policy")).toBe(
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
      );
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(res.headers.get("referrer-policy")).toBe("no-referrer");
      expect(res.headers.get("content-type")).toMatch(p.endsWith(".js") ? /^text\/javascript/ : p.endsWith(".css") ? /^text\/css/ : /^text\/html/);
      const html = await res.text();
      // No inline script or style for the CSP to refuse.
      if (!p.includes(".")) expect(html).not.toMatch(/<script(?![^>]*\bsrc=)|\sstyle=|<style|\son[a-z]+=/i);
    }
    expect((await fetch(`${base()}/console/nope.js`)).status).toBe(404);
    // The files are static assets the Worker serves under /console only, never at the site's root.
    for (const p of ["/index.html", "/console.js"]) expect((await fetch(`${base()}${p}`)).status).toBe(404);
  });

  it("says so when the key is refused", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const problems = await watchProblems(page);
    try {
      await page.goto(`${base()}/console`);
      await page.getByLabel("API key").fill("not-a-key-of-this-service");
      await page.getByRole("button", { name: "Sign in" }).click();
      await expect.poll(() => page.getByRole("alert").first().textContent(), SEEN).toMatch(/^Key refused/);
      expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
      expect(problems.filter((p) => !/status of 401/.test(p))).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it("runs under its CSP: an injected inline script does not run, and the browser reports it", async () => {
    const s = await openConsole(base(), USER_KEY);
    try {
      // As text: it runs in the page, whose DOM types this Node project does not load.
      const ran = await s.page.evaluate(`(() => {
        const script = document.createElement("script");
        script.textContent = "window.injected = true";
        document.body.append(script);
        return window.injected === true;
      })()`);
      expect(ran).toBe(false);
      await expect.poll(() => s.problems.some((p) => /CSP violation: script-src/.test(p)), SEEN).toBe(true);
    } finally {
      await s.close();
    }
  });

  it("takes a screenshot of the main view with a few locks held", async () => {
    // The Durable store's Worker here is this file's alone: its namespace holds only what these tests took.
    const api = httpClient(base(), USER_KEY);
    const shot = "shot";
    await api.post(`/v1/locks/${shot}.nightly-report/acquire`, { ttlMs: 600_000, holder: "report-worker@host-3 pid 4121" });
    const invoice = await api.post(`/v1/locks/${shot}.invoice-42/acquire`, { ttlMs: 45_000, holder: "billing@api-7" });
    const waiter = api.post(`/v1/locks/${shot}.invoice-42/acquire`, { ttlMs: 45_000, waitMs: 20_000, holder: "billing@api-2" });
    await api.post(`/v1/rwlocks/${shot}.catalog/read/acquire`, { ttlMs: 120_000, holder: "search-indexer" });
    await api.post(`/v1/rwlocks/${shot}.catalog/read/acquire`, { ttlMs: 120_000, holder: "sitemap-builder" });
    for (const holder of ["pdf-1", "pdf-2", "pdf-3"])
      await api.post(`/v1/semaphores/${shot}.pdf-render/acquire`, { limit: 4, ttlMs: 90_000, holder });
    await api.post(`/v1/idempotency/${shot}.stripe-evt_3PqX/begin`, { ttlMs: 30_000, holder: "webhook@edge-fra" });
    const s = await openConsole(base(), ADMIN_KEY);
    try {
      await filterBy(s.page, `${shot}.`);
      await expect.poll(() => cell(s.page, "Mutexes", `${shot}.invoice-42`, "Waiters"), SEEN).toBe("1");
      await rowButton(s.page, "Mutexes", `${shot}.nightly-report`).click();
      await expect.poll(() => field(s.page, "Holder"), SEEN).toBe("report-worker@host-3 pid 4121");
      await s.page.getByRole("button", { name: "Force release" }).waitFor(SEEN);
      const png = await s.page.screenshot({ fullPage: true });
      fs.mkdirSync(path.join(ROOT, "test-results"), { recursive: true });
      fs.writeFileSync(path.join(ROOT, "test-results/console.png"), png);
      if (process.env.HOLDFAST_UPDATE_SCREENSHOT === "1") fs.writeFileSync(path.join(ROOT, "docs/console.png"), png);
      expectNoProblems(s);
    } finally {
      await s.close();
      // The waiter is handed the lock, so its request ends before the servers do.
      await api.post(`/v1/locks/${shot}.invoice-42/release`, { token: invoice.body.token });
      await waiter;
    }
  });
});

// A real browser for the console's tests: Debian's Chromium driven by
// playwright-core (which brings no browser of its own). Like redis-server,
// Chromium is installed with apt-get when it is missing and we run as root
// (CI), else the error says how to install it.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import fs from "node:fs";
import { type Browser, chromium, type Page } from "playwright-core";

const CHROMIUM = "/usr/bin/chromium";
const NOT_FOUND = `${CHROMIUM} not found. Install it with: sudo apt-get install -y chromium`;

/** Headless, and nothing that talks to the network or the disk behind the test's back. */
const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** Async, so the test runner's own messages and the servers starting beside it are not held up for minutes. */
async function findOrInstallChromium(): Promise<string> {
  if (fs.existsSync(CHROMIUM)) return CHROMIUM;
  if (process.getuid?.() !== 0) throw new Error(NOT_FOUND);
  // Quiet unless it fails: then apt's own output says why.
  try {
    await promisify(execFile)("sh", ["-c", "apt-get update -qq && apt-get install -y -qq chromium"], {
      env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    throw new Error(`apt-get install chromium failed:\n${e.stdout ?? ""}${e.stderr ?? ""}`);
  }
  if (!fs.existsSync(CHROMIUM)) throw new Error(`apt-get install finished, but still: ${NOT_FOUND}`);
  return CHROMIUM;
}

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: await findOrInstallChromium(), headless: true, args: ARGS });
}

/**
 * Everything a page complains about: console errors and warnings (a CSP
 * violation is one), uncaught errors, answers of 5xx, and dialogs (dismissed: an injected
 * alert() must never wait for a click). A listener for
 * `securitypolicyviolation` reports violations even where Chromium would not
 * log them.
 */
export async function watchProblems(page: Page): Promise<string[]> {
  const problems: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error" || m.type() === "warning") problems.push(`console ${m.type()}: ${m.text()}`);
  });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  // A 5xx also shows as a console error without its URL or body: name both.
  page.on("response", (r) => {
    if (r.status() >= 500)
      void r.text().then(
        (body) => problems.push(`answer ${r.status()} to ${r.request().method()} ${r.url()}: ${body}`),
        () => {},
      );
  });
  page.on("dialog", (d) => {
    problems.push(`dialog: ${d.type()} ${d.message()}`);
    void d.dismiss();
  });
  // As text: it runs in the page, whose DOM types this Node project does not load.
  await page.addInitScript(
    'document.addEventListener("securitypolicyviolation", (e) => console.error("CSP violation: " + e.violatedDirective + " " + e.blockedURI));',
  );
  return problems;
}

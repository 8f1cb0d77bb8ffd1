// The console's entry: sign-in and sign-out, the two views, and the clock
// that keeps them current: the lists re-read every second while the tab is
// shown (never while hidden: a background tab costs the service nothing),
// and the countdowns redrawn four times a second from the last answer.
import { ApiError, api } from "./api.js";
import { createAuditView } from "./audit-view.js";
import { createDetailView } from "./detail-view.js";
import { byId, say, tickCountdowns } from "./dom.js";
import { createLocksView } from "./locks-view.js";
import { createPoller } from "./poller.js";
import { currentKey, forgetKey, keepKey } from "./session.js";

const REFUSED = "Key refused: the service does not know this key.";

/** @type {{ namespace: string, keyName: string, role: string } | undefined} */
let caller;
let view = "locks";

const locks = createLocksView({
  onOpen: (def, name, opener) => {
    locks.markOpen(def.kind, name);
    detail.open(def, name, opener);
  },
  onUnauthorized: () => signOut(REFUSED),
});
const detail = createDetailView({
  isAdmin: () => caller?.role === "admin",
  onChanged: () => poller.now(),
  onClosed: (opener) => {
    locks.markOpen(undefined);
    if (opener?.isConnected) opener.focus();
  },
  onUnauthorized: () => signOut(REFUSED),
});
const audit = createAuditView({ onUnauthorized: () => signOut(REFUSED) });

const poller = createPoller(async () => {
  if (view === "locks") await Promise.all([locks.refresh(), detail.refresh()]);
  else await audit.refresh();
});
setInterval(tickCountdowns, 250);

byId("sign-in-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const input = byId("api-key");
  const error = byId("sign-in-error");
  const key = input.value.trim();
  error.textContent = "";
  if (!key) {
    error.textContent = "Enter an API key.";
    input.focus();
    return;
  }
  const who = await whoami(key, error);
  if (!who) return;
  keepKey(key);
  input.value = "";
  enter(who);
});

byId("sign-out").addEventListener("click", () => signOut("Signed out. The key is forgotten."));

byId("filter-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const prefix = byId("prefix").value.trim();
  locks.filter(prefix);
  say(prefix ? `Showing names that start with "${prefix}".` : "Showing every name.");
});

byId("tab-locks").addEventListener("click", () => showView("locks"));
byId("tab-audit").addEventListener("click", () => showView("audit"));

/** Asks the service who a key is; undefined (with the reason shown in `errorLine`) when it will not say. */
async function whoami(key, errorLine) {
  try {
    const who = await api("/v1/whoami", { key });
    if (typeof who?.namespace !== "string") throw new ApiError(200, "bad_answer", "the service's answer to /v1/whoami has no namespace");
    return who;
  } catch (err) {
    errorLine.textContent = err instanceof ApiError && err.status === 401 ? REFUSED : `Could not sign in: ${err.message}`;
    return undefined;
  }
}

function enter(who) {
  caller = { namespace: who.namespace, keyName: String(who.keyName ?? "-"), role: who.role === "admin" ? "admin" : "user" };
  byId("who-namespace").textContent = caller.namespace;
  byId("who-key").textContent = caller.keyName;
  byId("who-role").textContent = caller.role;
  byId("identity").hidden = false;
  byId("sign-in").hidden = true;
  byId("signed-in").hidden = false;
  showView("locks");
  say(`Signed in to namespace ${caller.namespace} as ${caller.keyName} (${caller.role}).`);
  byId("locks-title").focus();
}

function signOut(message) {
  forgetKey();
  caller = undefined;
  poller.stop();
  locks.reset();
  detail.reset();
  audit.reset();
  byId("prefix").value = "";
  byId("identity").hidden = true;
  byId("signed-in").hidden = true;
  byId("sign-in").hidden = false;
  // A refused key is told once, by the sign-in form's alert; anything else by the status line.
  byId("sign-in-error").textContent = message === REFUSED ? REFUSED : "";
  say(message === REFUSED ? "" : message);
  byId("api-key").focus();
}

function showView(next) {
  view = next;
  byId("locks-view").hidden = next !== "locks";
  byId("audit-view").hidden = next !== "audit";
  // The detail panel belongs to the locks view; it stays open behind the audit log.
  byId("signed-in").classList.toggle("audit", next === "audit");
  byId("tab-locks").toggleAttribute("aria-current", false);
  byId("tab-audit").toggleAttribute("aria-current", false);
  byId(next === "locks" ? "tab-locks" : "tab-audit").setAttribute("aria-current", "page");
  poller.start();
}

// A key kept from earlier in this tab (a reload) signs in again, if the service still knows it.
const kept = currentKey();
if (kept) {
  whoami(kept, byId("sign-in-error")).then((who) => {
    if (who) enter(who);
    else if (byId("sign-in-error").textContent === REFUSED) signOut(REFUSED);
  });
}

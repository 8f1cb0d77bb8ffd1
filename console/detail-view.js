// The detail panel of one lock: its state, pushed by the service as it
// changes (watch.js; read with the kind's GET only while no watch socket is
// up), the audit log's entries for it, refreshed with the list, and, for an
// admin key on a kind that has it, the force-release form while the lock is held.
import { ApiError, api, lockPath } from "./api.js";
import { byId, countdown, el, say } from "./dom.js";
import { plural, text, time } from "./format.js";
import { currentKey } from "./session.js";
import { watchLock } from "./watch.js";

/** How much of the audit log the panel searches for this lock's entries (newest first). */
const AUDIT_SCAN = 100;
/** A watch socket that went down is opened again this much later (meanwhile the state is read each refresh). */
const REWATCH_MS = 5000;

/**
 * @param {{ isAdmin: () => boolean, onChanged: () => void, onClosed: (opener?: HTMLElement) => void, onUnauthorized: () => void }} hooks
 */
export function createDetailView({ isAdmin, onChanged, onClosed, onUnauthorized }) {
  const panel = byId("detail");
  const title = byId("detail-title");
  const fields = byId("detail-fields");
  const events = byId("detail-events");
  const releaseBox = byId("force-release");
  const form = byId("force-release-form");
  const reason = byId("fr-reason");
  const holderField = byId("fr-holder-field");
  const holder = byId("fr-holder");
  const formError = byId("fr-error");
  const submit = form.querySelector("button[type=submit]");
  /** @type {{ def: any, name: string, opener?: HTMLElement } | undefined} */
  let current;
  /** The open lock's state as last read: a mutex's force release names the fence shown, an election's the term. */
  let shownState;
  // Bumped whenever the panel shows another lock or closes: late answers for the old one are dropped.
  let generation = 0;
  // What the panel shows, as read: an answer that says the same again leaves the page as it is, so a
  // screen reader's place in the panel is not lost every second (the countdowns tick on their own).
  let shownFields = "";
  let shownEvents = "";
  /** The open lock's watch socket, and whether it has pushed a state since it opened (then nothing polls the state). */
  let watch;
  let watched = false;
  let rewatch;

  function startWatch() {
    stopWatch();
    if (!current) return;
    const { def, name } = current;
    const asked = generation;
    let path;
    try {
      path = lockPath(def.path, name);
    } catch {
      return; // refresh reports the name
    }
    watch = watchLock(path, currentKey() ?? "", {
      onState: (state) => {
        if (asked !== generation) return;
        watched = true;
        showState(def, state);
      },
      onDown: () => {
        if (asked !== generation) return;
        watched = false;
        rewatch = setTimeout(() => asked === generation && startWatch(), REWATCH_MS);
      },
    });
  }

  function stopWatch() {
    clearTimeout(rewatch);
    watch?.close();
    watch = undefined;
    watched = false;
  }

  function showState(def, state) {
    shownState = state ?? {};
    renderFields(def, shownState);
    // Force release is offered only for a lock someone holds: one freed meanwhile has nothing to release.
    releaseBox.hidden = !(def.releasable && isAdmin() && def.held?.(shownState));
  }

  async function refresh() {
    if (!current) return;
    const { def, name } = current;
    const asked = generation;
    const [state, audit] = await Promise.allSettled([
      // lockPath may refuse the name: inside the promise, so it is reported like any failed read.
      watched ? Promise.resolve(undefined) : Promise.resolve().then(() => api(lockPath(def.path, name))),
      api(`/v1/audit?limit=${AUDIT_SCAN}`),
    ]);
    if (asked !== generation) return;
    if ([state, audit].some((r) => r.status === "rejected" && r.reason instanceof ApiError && r.reason.status === 401)) return onUnauthorized();
    if (state.status === "fulfilled") {
      if (!watched && state.value !== undefined) showState(def, state.value);
    } else {
      shownFields = "";
      fields.replaceChildren(el("div", {}, el("dt", {}, "State"), el("dd", { class: "error" }, `Could not read: ${state.reason.message}`)));
    }
    if (audit.status === "fulfilled") renderEvents(def, name, audit.value?.entries);
    else {
      shownEvents = "";
      events.replaceChildren(el("li", { class: "error" }, `Could not read the audit log: ${audit.reason.message}`));
    }
  }

  function renderFields(def, item) {
    // What the fields would show, not the whole answer: a mutex's ttlMs (time left at the read) moves every time.
    const seen = JSON.stringify(def.fields.map((f) => (f.list ? f.list(item) : f.at ? f.at(item) : f.value(item))));
    if (seen === shownFields) return;
    shownFields = seen;
    fields.replaceChildren(
      ...def.fields.map((f) => {
        const dd = el("dd");
        if (f.list) {
          const entries = f.list(item);
          dd.append(entries.length ? el("ul", { class: "plain" }, ...entries.map((entry) => el("li", {}, entry))) : "-");
        } else if (f.at) {
          const at = f.at(item);
          dd.append(time(at));
          if (typeof at === "number") dd.append(" UTC (in ", countdown(at), ")");
        } else {
          dd.append(f.value(item));
        }
        return el("div", {}, el("dt", {}, f.label), dd);
      }),
    );
  }

  function renderEvents(def, name, entries) {
    const mine = (Array.isArray(entries) ? entries : []).filter((e) => e?.kind === def.kind && e?.name === name);
    const seen = JSON.stringify(mine);
    if (seen === shownEvents) return;
    shownEvents = seen;
    if (!mine.length) {
      events.replaceChildren(el("li", { class: "note" }, `No force releases of this lock among the latest ${AUDIT_SCAN} audit entries.`));
      return;
    }
    events.replaceChildren(
      ...mine.map((e) =>
        el(
          "li",
          {},
          el("strong", {}, `${time(e.at)} UTC`),
          ` force released by ${text(e.keyName)}: ${typeof e.released === "number" ? plural(e.released, "holder") : "-"} freed`,
          `, holder ${text(e.holder)}, fence ${text(e.fence)}. Reason: `,
          el("q", {}, text(e.reason)),
        ),
      ),
    );
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (!current) return;
    const { def, name } = current;
    formError.textContent = "";
    const why = reason.value.trim();
    if (!why) {
      formError.textContent = "Give a reason: it is written to the audit log.";
      reason.focus();
      return;
    }
    const body = { reason: why };
    // A label is sent as typed (labels may have spaces); an empty field means every holder.
    if (def.manyHolders && holder.value.trim()) body.holder = holder.value;
    // A mutex lease (an election's term) is freed only if it is still the one on screen: had it passed to
    // the next holder since, the service leaves that holder alone and says so (409 not_held).
    const fence = shownState ? def.shownFence?.(shownState) : undefined;
    if (Number.isSafeInteger(fence)) body.fence = fence;
    submit.disabled = true;
    try {
      const answer = await api(`${lockPath(def.path, name)}/force-release`, { method: "POST", body });
      const freed = typeof answer?.released === "number" ? plural(answer.released, "holder") : "the holders";
      say(`Force released ${def.noun.toLowerCase()} ${name}: ${freed} freed (audit entry ${text(answer?.auditId)}).`);
      form.reset();
      await refresh();
      onChanged();
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) return onUnauthorized();
      formError.textContent = `Not released: ${err.message}`;
    } finally {
      submit.disabled = false;
    }
  });

  byId("detail-close").addEventListener("click", () => close());

  function close() {
    const opener = current?.opener;
    current = undefined;
    generation++;
    stopWatch();
    panel.hidden = true;
    onClosed(opener);
  }

  return {
    /** Shows one lock; `opener` (its row's button) gets the focus back on close. */
    open(def, name, opener) {
      current = { def, name, opener };
      shownState = undefined;
      generation++;
      title.textContent = `${def.noun} ${name}`;
      fields.replaceChildren();
      events.replaceChildren();
      shownFields = shownEvents = "";
      form.reset();
      formError.textContent = "";
      // Shown once the state says the lock is held (showState).
      releaseBox.hidden = true;
      holderField.hidden = !def.manyHolders;
      panel.hidden = false;
      panel.focus();
      startWatch();
      return refresh();
    },
    refresh,
    close,
    /** Forgets the lock without giving focus anywhere (sign-out). */
    reset() {
      current = undefined;
      generation++;
      stopWatch();
      panel.hidden = true;
      fields.replaceChildren();
      events.replaceChildren();
      shownFields = shownEvents = "";
    },
  };
}

// The kinds of lock as the console shows them: where each is listed,
// whether an admin may force-release it, and its columns (the list) and
// fields (the detail panel), read from the kind's GET answer (docs/API.md).
// A field is { label, value } (text), { label, list } (one line per entry,
// e.g. holder labels), or { label, at } (a store time: a countdown in the
// list, the time and a countdown in the panel). `held` says whether anyone
// holds it: the panel offers force release only then, naming the lease
// shown where `shownFence` gives its fence. A `whole` column's
// text never wraps (a fence); neither do names: a narrow table scrolls.
import { NONE, plural, text, time } from "./format.js";

const mutexState = (i) => {
  if (i.held === true) return i.count > 1 ? `held, re-entered (depth ${i.count})` : "held";
  if (i.held === false) return typeof i.delayedUntil === "number" ? "free, in lock-delay" : "free";
  return NONE;
};

const labels = (i) => (Array.isArray(i.holderLabels) ? i.holderLabels.map(text) : []);

const permits = (i) => (typeof i.used !== "number" ? NONE : typeof i.limit === "number" ? `${i.used} of ${i.limit}` : String(i.used));

const flowLimit = (i) => {
  const l = i.limit;
  if (!l || typeof l !== "object") return NONE;
  const parts = [typeof l.concurrency === "number" ? `${l.concurrency} at once` : "", l.rate ? `${l.rate.count} per ${l.rate.perMs} ms` : ""];
  return parts.filter(Boolean).join(", ") || NONE;
};

const slotsHeld = (i) =>
  typeof i.held !== "number" ? NONE : typeof i.limit?.concurrency === "number" ? `${i.held} of ${i.limit.concurrency}` : String(i.held);

const startsInWindow = (i) => (typeof i.starts !== "number" ? NONE : i.limit?.rate ? `${i.starts} of ${i.limit.rate.count}` : String(i.starts));

const storedResponse = (i) => {
  if (i.response === undefined) return NONE;
  const json = JSON.stringify(i.response);
  return json.length > 2000 ? `${json.slice(0, 2000)}... (${json.length} characters)` : json;
};

export const KINDS = [
  {
    kind: "mutex",
    title: "Mutexes",
    noun: "Mutex",
    path: "/v1/locks",
    releasable: true,
    manyHolders: false,
    held: (i) => i.held === true,
    // A force release names the lease shown: one that passed to the next holder since is left alone.
    shownFence: (i) => (i.held === true ? i.fence : undefined),
    columns: [
      { label: "State", value: mutexState },
      { label: "Holder", value: (i) => text(i.holder) },
      { label: "Fence", value: (i) => text(i.fence), whole: true },
      { label: "Expires in", at: (i) => i.expiresAt },
      { label: "Waiters", value: (i) => text(i.waiters) },
    ],
    fields: [
      { label: "State", value: mutexState },
      { label: "Holder", value: (i) => text(i.holder) },
      { label: "Fence", value: (i) => text(i.fence), whole: true },
      { label: "Expires at", at: (i) => i.expiresAt },
      { label: "Waiters", value: (i) => text(i.waiters) },
      { label: "Delayed until", at: (i) => i.delayedUntil },
    ],
  },
  {
    kind: "rwlock",
    title: "Read-write locks",
    noun: "Read-write lock",
    path: "/v1/rwlocks",
    releasable: true,
    manyHolders: true,
    held: (i) => i.mode === "read" || i.mode === "write",
    columns: [
      { label: "Mode", value: (i) => text(i.mode) },
      { label: "Readers", value: (i) => text(i.readers) },
      { label: "Writer", value: (i) => text(i.writer) },
      { label: "Holders", value: (i) => text(labels(i)) },
      { label: "Fence", value: (i) => text(i.fence), whole: true },
      { label: "Expires in", at: (i) => i.expiresAt },
      { label: "Waiters", value: (i) => text(i.waiters) },
    ],
    fields: [
      { label: "Mode", value: (i) => text(i.mode) },
      { label: "Readers", value: (i) => text(i.readers) },
      { label: "Writer", value: (i) => text(i.writer) },
      { label: "Holders (first to end, labelled ones)", list: labels },
      { label: "Fence", value: (i) => text(i.fence), whole: true },
      { label: "First lease ends at", at: (i) => i.expiresAt },
      { label: "Waiters", value: (i) => text(i.waiters) },
    ],
  },
  {
    kind: "semaphore",
    title: "Semaphores",
    noun: "Semaphore",
    path: "/v1/semaphores",
    releasable: true,
    manyHolders: true,
    held: (i) => typeof i.holders === "number" && i.holders > 0,
    columns: [
      { label: "Permits used", value: permits },
      { label: "Holders", value: (i) => (typeof i.holders === "number" ? plural(i.holders, "holder") : NONE) },
      { label: "Holder labels", value: (i) => text(labels(i)) },
      { label: "Expires in", at: (i) => i.expiresAt },
      { label: "Waiters", value: (i) => text(i.waiters) },
    ],
    fields: [
      { label: "Permits used", value: permits },
      { label: "Holders", value: (i) => text(i.holders) },
      { label: "Holder labels (first to end, labelled ones)", list: labels },
      { label: "First lease ends at", at: (i) => i.expiresAt },
      { label: "Waiters", value: (i) => text(i.waiters) },
    ],
  },
  {
    kind: "flow",
    title: "Flow limits",
    noun: "Flow limit",
    path: "/v1/flows",
    releasable: true,
    manyHolders: true,
    held: (i) => typeof i.held === "number" && i.held > 0,
    columns: [
      { label: "Limit", value: flowLimit },
      { label: "Slots held", value: slotsHeld },
      { label: "Starts in window", value: startsInWindow },
      { label: "Next start at", at: (i) => i.nextStartAt },
      { label: "Waiters", value: (i) => text(i.waiters) },
    ],
    fields: [
      { label: "Limit", value: flowLimit },
      { label: "Slots held", value: slotsHeld },
      { label: "Holder labels (first to end, labelled ones)", list: labels },
      { label: "First lease ends at", at: (i) => i.expiresAt },
      { label: "Starts in window", value: startsInWindow },
      { label: "Window admits the next start at", at: (i) => i.nextStartAt },
      { label: "Waiters", value: (i) => text(i.waiters) },
    ],
  },
  {
    kind: "idempotency",
    title: "Idempotency keys",
    noun: "Idempotency key",
    path: "/v1/idempotency",
    releasable: false,
    manyHolders: false,
    columns: [
      { label: "State", value: (i) => text(i.state ?? i.status) },
      { label: "Holder", value: (i) => text(i.holder) },
      { label: "Fence", value: (i) => text(i.fence), whole: true },
      { label: "Expires in", at: (i) => i.expiresAt },
      { label: "Completed at (UTC)", value: (i) => time(i.completedAt) },
    ],
    fields: [
      { label: "State", value: (i) => text(i.state ?? i.status) },
      { label: "Holder", value: (i) => text(i.holder) },
      { label: "Fence", value: (i) => text(i.fence), whole: true },
      { label: "Expires at", at: (i) => i.expiresAt },
      { label: "Completed at (UTC)", value: (i) => time(i.completedAt) },
      { label: "Stored response", value: storedResponse },
    ],
  },
  {
    kind: "election",
    title: "Elections",
    noun: "Election",
    path: "/v1/elections",
    releasable: true,
    manyHolders: false,
    held: (i) => typeof i.term === "number",
    // A force release names the term shown (an election's fence): a leader that came since is left alone.
    shownFence: (i) => i.term,
    columns: [
      { label: "Leader's value", value: (i) => text(i.value) },
      { label: "Term", value: (i) => text(i.term), whole: true },
      { label: "Expires in", at: (i) => i.expiresAt },
      { label: "In line", value: (i) => text(i.waiters) },
    ],
    fields: [
      { label: "Leader's value", value: (i) => text(i.value) },
      { label: "Term", value: (i) => text(i.term), whole: true },
      // A start, not an end: its time, with no countdown (which read "in ended").
      { label: "Leading since (UTC)", value: (i) => time(i.since) },
      { label: "Lease ends at", at: (i) => i.expiresAt },
      { label: "Changes so far (position)", value: (i) => text(i.position) },
      { label: "In line", value: (i) => text(i.waiters) },
    ],
  },
];

/** The kind a name like "mutex" stands for (audit entries name kinds so), or undefined. */
export const kindNamed = (kind) => KINDS.find((k) => k.kind === kind);

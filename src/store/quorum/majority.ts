import { StoreUnavailableError } from "../../errors.js";

/** One node's answer to a quorum call: its value, or what it threw (an outage, a bug, our per-node deadline). */
export type NodeAnswer<T> = { ok: true; value: T } | { ok: false; error: unknown };

export interface Gathered<T> {
  /** Answers in node order; undefined for a node that has not answered yet. */
  answers: Array<NodeAnswer<T> | undefined>;
  /** Every node's answer, once all are in (each call is bounded by its node's deadline). */
  all: Promise<Array<NodeAnswer<T>>>;
}

/**
 * Calls every node at once and resolves as soon as `decided` says the
 * answers so far settle the outcome (for example a majority granted), or
 * when all are in. A slow or dead node then costs a call nothing once the
 * others have decided it, and never more than its own deadline.
 */
export function gather<T>(
  count: number,
  call: (node: number) => Promise<T>,
  decided: (answers: Array<NodeAnswer<T>>) => boolean,
): Promise<Gathered<T>> {
  const answers: Array<NodeAnswer<T> | undefined> = new Array(count).fill(undefined);
  const settled = Array.from({ length: count }, (_, i) =>
    call(i).then(
      (value): NodeAnswer<T> => (answers[i] = { ok: true, value }),
      (error: unknown): NodeAnswer<T> => (answers[i] = { ok: false, error }),
    ),
  );
  const all = Promise.all(settled);
  return new Promise((resolve) => {
    let pending = count;
    const check = () => {
      const done = answers.filter((a): a is NodeAnswer<T> => a !== undefined);
      if (pending === 0 || decided(done)) resolve({ answers: [...answers], all });
    };
    for (const p of settled)
      p.then(() => {
        pending--;
        check();
      });
  });
}

/** The values of the nodes that answered. */
export function valuesOf<T>(answers: Array<NodeAnswer<T> | undefined>): T[] {
  return answers.flatMap((a) => (a?.ok ? [a.value] : []));
}

/** A quorum that could not reach a majority: an outage, with what the nodes said. */
export function noMajority(what: string, answers: Array<NodeAnswer<unknown> | undefined>, majority: number): StoreUnavailableError {
  const failed = answers.filter((a) => !a?.ok);
  const first = failed.find((a) => a && !a.ok) as { ok: false; error: unknown } | undefined;
  const reason = first ? ` (first: ${first.error instanceof Error ? first.error.message : String(first.error)})` : "";
  return new StoreUnavailableError(
    `${what}: ${answers.length - failed.length} of ${answers.length} Redis nodes answered, a majority is ${majority}${reason}`.slice(0, 400),
    "unknown",
  );
}

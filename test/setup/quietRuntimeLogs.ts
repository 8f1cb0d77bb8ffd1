// workerd's own log lines reach the test run's output through the Workers Vitest
// integration, which writes each one to process.stdout/stderr of this (the main)
// process; its config takes no filter. Some of them are the expected result of what
// tests do on purpose, and printed as "uncaught exception" with a native stack they
// would hide a real error. Those are dropped here, each pattern with its reason.
// HOLDFAST_TEST_LOGS=all shows everything.

const EXPECTED_RUNTIME_LOGS: Array<[RegExp, string]> = [
  // Conformance cases restart a lock object with state.abort() while clients wait.
  [/restarted by the test/, "a deliberate lock object restart"],
  // Cases that store a record our code did not write (or a fence past 2^53) expect the 500 it causes.
  [/the stored mutex record is not one this code wrote|has no next fence below 2\^53/, "a deliberately corrupted record or fence"],
  // Cases that make a lock object unreachable (the "(test fake)" lines of vitest.config.ts)
  // leave the runtime's calls to it refused and its connections lost.
  [/disconnected: Connection refused \(os error 111\)|Network connection lost\./, "a lock object made unreachable"],
  // workerd's internal alarm bookkeeping notes (not errors of ours).
  [/^NOSENTRY SQLite alarm /, "workerd's alarm bookkeeping"],
];

type Write = typeof process.stdout.write;

/** Filters both streams until the returned function is called. */
export function quietExpectedRuntimeLogs(): () => void {
  if (process.env.HOLDFAST_TEST_LOGS === "all") return () => undefined;
  const restore: Array<() => void> = [];
  for (const stream of [process.stdout, process.stderr]) {
    const write: Write = stream.write.bind(stream);
    stream.write = ((chunk: unknown, ...rest: unknown[]) => {
      if (typeof chunk === "string" && EXPECTED_RUNTIME_LOGS.some(([re]) => re.test(chunk))) {
        const done = rest.find((arg) => typeof arg === "function") as (() => void) | undefined;
        done?.();
        return true;
      }
      return (write as (...args: unknown[]) => boolean)(chunk, ...rest);
    }) as Write;
    restore.push(() => {
      stream.write = write;
    });
  }
  return () => {
    for (const r of restore) r();
  };
}

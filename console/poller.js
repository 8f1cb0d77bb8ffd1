// Runs a refresh once a second while the tab is visible: the next run is
// planned when the last one ends (a slow service is never asked twice at
// once), paused while the tab is hidden, and run at once when it is shown
// again or when something changed (now()).
const PERIOD_MS = 1000;

/** @param {() => Promise<void>} refresh */
export function createPoller(refresh) {
  let running = false;
  let again = false;
  let timer;
  let active = false;

  async function run() {
    clearTimeout(timer);
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      await refresh();
    } catch {
      // Each view shows its own failures; the clock keeps going.
    } finally {
      running = false;
    }
    if (again) {
      again = false;
      return run();
    }
    plan();
  }

  function plan() {
    clearTimeout(timer);
    if (active && document.visibilityState === "visible") timer = setTimeout(run, PERIOD_MS);
  }

  document.addEventListener("visibilitychange", () => {
    if (active && document.visibilityState === "visible") run();
    else clearTimeout(timer);
  });

  return {
    start() {
      active = true;
      run();
    },
    now: () => active && run(),
    stop() {
      active = false;
      again = false;
      clearTimeout(timer);
    },
  };
}

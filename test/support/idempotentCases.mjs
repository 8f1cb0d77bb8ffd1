// The shared cases of `idempotent(handler)` (docs/idempotency.md's runtime table), plain JavaScript so
// that every runtime runs this very file: Node 20 and 24, Deno and Bun import it beside the package as a
// user has it (test/library/idempotentRuntimes.test.ts), workerd from the vitest pool
// (test/library/idempotent.workers.test.ts). The caller hands in the package's exports and the keys'
// backend (`{ redis }` or `{ client }`); the cases answer what a user would see, to compare with EXPECTED.

/** @param {import("./idempotentCases.d.mts").CasesInput} input */
export async function runCases({ idempotent, senders, keys }) {
  const unique = (label) => `${label}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  const post = (headers, body) =>
    new Request("https://shop.example/hook", {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    });
  const seen = {};

  {
    let runs = 0;
    const h = idempotent(
      async (_request, extra) => {
        runs++;
        return Response.json({ runs, extra }, { status: 201 });
      },
      { ...keys, ttlMs: 5000 },
    );
    const key = unique("replay");
    const first = await h(post({ "idempotency-key": key }, { a: 1 }), "env");
    const again = await h(post({ "idempotency-key": key }, { a: 1 }), "env");
    seen.replay = { first: first.status, again: again.status, replayed: again.headers.get("idempotent-replayed"), body: await again.json(), runs };
  }
  {
    let release;
    const gate = new Promise((r) => (release = r));
    let runs = 0;
    const h = idempotent(
      async () => {
        runs++;
        await gate;
        return new Response("done");
      },
      { ...keys, ttlMs: 5000 },
    );
    const key = unique("overlap");
    const first = h(post({ "idempotency-key": key }, { a: 1 }));
    while (runs === 0) await new Promise((r) => setTimeout(r, 10));
    const overlap = await h(post({ "idempotency-key": key }, { a: 1 }));
    const other = await h(post({ "idempotency-key": key }, { a: 2 }));
    release();
    seen.conflicts = {
      overlap: overlap.status,
      retryAfter: Number(overlap.headers.get("retry-after")) >= 1,
      other: other.status,
      first: (await first).status,
      runs,
    };
  }
  {
    const h = idempotent(async () => new Response("ran"), { ...keys, ttlMs: 5000, required: true });
    const missing = await h(post({}, { a: 1 }));
    seen.required = { status: missing.status, error: (await missing.json()).error };
  }
  {
    let runs = 0;
    const h = idempotent(
      async () => {
        runs++;
        return new Response("processed");
      },
      { ...keys, ttlMs: 5000, key: senders.github, required: true },
    );
    const id = unique("gh");
    await h(post({ "x-github-delivery": id, "x-github-event": "push" }, { ref: "main" }));
    const again = await h(post({ "x-github-delivery": id, "x-github-event": "push" }, { ref: "main" }));
    seen.github = { replayed: again.headers.get("idempotent-replayed"), runs };
  }
  {
    let runs = 0;
    const h = idempotent(
      async () => {
        runs++;
        if (runs === 1) throw new Error("down");
        return new Response("ok", { status: runs === 2 ? 502 : 200 });
      },
      { ...keys, ttlMs: 5000 },
    );
    const key = unique("fails");
    const thrown = await h(post({ "idempotency-key": key }, { a: 1 })).then(
      () => "answered",
      (err) => err.message,
    );
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await h(post({ "idempotency-key": key }, { a: 1 }))).status);
    seen.fails = { thrown, statuses, runs };
  }
  {
    // A deadline's time left (as AWS Lambda's context tells it, beside the request): the key's ttl for this run.
    const asked = [];
    const h = idempotent(async () => new Response("in time"), {
      ...keys,
      ttlMs: (_request, env) => {
        asked.push(env.region);
        return env.timeLeft();
      },
    });
    const key = unique("deadline");
    const first = await h(post({ "idempotency-key": key }, { a: 1 }), { region: "eu", timeLeft: () => 3000.5 });
    const again = await h(post({ "idempotency-key": key }, { a: 1 }), { region: "eu", timeLeft: () => 3000 });
    const bad = await h(post({ "idempotency-key": unique("bad") }, { a: 1 }), { region: "us", timeLeft: () => 50 }).then(
      () => "answered",
      (err) => err.name,
    );
    seen.deadline = { first: await first.text(), replayed: again.headers.get("idempotent-replayed"), bad, asked };
  }
  return seen;
}

export const EXPECTED = {
  replay: { first: 201, again: 201, replayed: "true", body: { runs: 1, extra: "env" }, runs: 1 },
  conflicts: { overlap: 409, retryAfter: true, other: 422, first: 200, runs: 1 },
  required: { status: 400, error: "missing_idempotency_key" },
  github: { replayed: "true", runs: 1 },
  fails: { thrown: "down", statuses: [502, 200, 200], runs: 3 },
  deadline: { first: "in time", replayed: "true", bad: "TypeError", asked: ["eu", "eu", "us"] },
};

// One consumer per region: run this on every machine of the region; only the leader of the
// election consumer-<REGION> works, the others wait in line to take over.
//   HOLDFAST_URL=... HOLDFAST_API_KEY=... REGION=eu npx tsx consumer.ts <id> [batches]
// It works `batches` batches while it leads (forever without), then resigns: the next in line leads at once.
import { HoldfastClient } from "holdfast/client";

const [id = "consumer", batchesArg] = process.argv.slice(2);
const batches = batchesArg === undefined ? Number.POSITIVE_INFINITY : Number(batchesArg);
const client = new HoldfastClient({ baseUrl: process.env.HOLDFAST_URL ?? "", apiKey: process.env.HOLDFAST_API_KEY ?? "" });
const election = `consumer-${process.env.REGION ?? "eu"}`;

let done = 0;
while (done < batches) {
  // Waits in line for as long as it takes; the value is what the observers see.
  const leadership = await client.campaign(election, { value: id, ttlMs: 5000, waitMs: 3_600_000 });
  console.log(`${id}: leading ${election}, term ${leadership.term}`);
  while (done < batches && !leadership.signal.aborted) {
    // A real consumer would pass leadership.term to what it writes (holdfast/fence), so a paused ex-leader is refused.
    await new Promise((r) => setTimeout(r, 200)); // one batch of work
    done += 1;
    console.log(`${id}: batch ${done}`);
  }
  if (leadership.signal.aborted) console.log(`${id}: lost the term; campaigning again`);
  await leadership.resign().catch(() => undefined);
}
console.log(`${id}: resigned`);

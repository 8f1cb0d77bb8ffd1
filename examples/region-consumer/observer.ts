// Who leads the region's consumers, told every change in order (a new leader, a new value), resuming
// after a reconnect by itself.
//   HOLDFAST_URL=... HOLDFAST_API_KEY=... REGION=eu npx tsx observer.ts [changes]
// It stops after `changes` changes (never without).
import { HoldfastClient } from "holdfast/client";

const [countArg] = process.argv.slice(2);
const count = countArg === undefined ? Number.POSITIVE_INFINITY : Number(countArg);
const client = new HoldfastClient({ baseUrl: process.env.HOLDFAST_URL ?? "", apiKey: process.env.HOLDFAST_API_KEY ?? "" });
const election = `consumer-${process.env.REGION ?? "eu"}`;

let seen = 0;
for await (const change of client.observe(election, { since: 0 })) {
  console.log(`observer: ${change.position}: ${change.value} leads, term ${change.term}${change.missed ? " (changes before it missed)" : ""}`);
  seen += 1;
  if (seen >= count) break;
}

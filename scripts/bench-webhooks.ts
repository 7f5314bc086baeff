// `npm run bench:webhooks`: webhooks on chains of their own and `npm run api` as its own process: the
// latency from a change's block to its delivery with 10,000 and 100,000 watched pairs (BENCH_PAIRS), with the
// API's memory and idle CPU; the API killed while deliveries are pending; a receiver answering 500 for
// BENCH_OUTAGE_SECONDS (600); two API processes on one PostgreSQL database.
import path from "node:path";

import { benchmarkWebhooks } from "../src/bench/webhooks.ts";

const pairSteps = (process.env.BENCH_PAIRS ?? "10000,100000").split(",").map(Number);
await benchmarkWebhooks({
  pairSteps,
  changes: Number(process.env.BENCH_CHANGES ?? 20),
  outageSeconds: Number(process.env.BENCH_OUTAGE_SECONDS ?? 600),
  projectRoot: path.resolve(import.meta.dirname, ".."),
  print: (line) => console.log(line),
});

// `npm run bench:api`: the API under autocannon load on local source chains (anvil, LiteSVM endpoint),
// measured side by side in one run, plus the upstream cost of 1,000 concurrent distinct queries and of
// one 100-item batch; and `npm run api` with one worker per core.
import { availableParallelism } from "node:os";

import { benchmarkApi } from "../src/bench/api.ts";

const { load, burst, batch } = await benchmarkApi(Number(process.env.BENCH_SECONDS ?? 5));
const [evm, bare, svm, , workers] = load;
console.log("| route | req/s | p50 ms | p99 ms | non-2xx |\n|---|---:|---:|---:|---:|");
for (const row of load) console.log(`| ${row.label} | ${row.requestsPerSecond.toFixed(0)} | ${row.p50Ms} | ${row.p99Ms} | ${row.non2xx} |`);
console.log(`\nccq-evm (cached) / bare Fastify throughput: ${(evm.requestsPerSecond / bare.requestsPerSecond).toFixed(2)} (target ≥ 0.5)`);
console.log(`ccq-svm (cached) / bare Fastify throughput: ${(svm.requestsPerSecond / bare.requestsPerSecond).toFixed(2)} (target ≥ 0.5)`);
console.log(
  `${workers.label} / one process: ${(workers.requestsPerSecond / evm.requestsPerSecond).toFixed(2)} (${availableParallelism()} cores, load generator included)`,
);
console.log(
  `${burst.queries} concurrent distinct ccq-evm queries: ${burst.upstreamRequests} upstream HTTP requests (target ≤ 20), ${burst.ms.toFixed(0)} ms`,
);
console.log(
  `one ccq-evm batch of ${batch.items} distinct queries: ${batch.upstreamRequests} upstream HTTP requests (target ≤ 2), ${batch.ms.toFixed(0)} ms`,
);

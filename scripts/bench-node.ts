// `npm run bench:node`: three circuit nodes on a fresh devnet (quorum 2, L2 blocks every 2 s): time from a
// job's request to its finalization (median, p95), finalized jobs per minute, and gas per finalized job.
// BENCH_JOBS (default 40) jobs, one every BENCH_INTERVAL_MS (default 250).
import path from "node:path";

import { formatTimings } from "../src/bench/bridge-timing.ts";
import { measureNodeThroughput } from "../src/bench/node-throughput.ts";

const projectRoot = path.resolve(import.meta.dirname, "..");
const result = await measureNodeThroughput({
  jobs: Number(process.env.BENCH_JOBS ?? 40),
  intervalMs: Number(process.env.BENCH_INTERVAL_MS ?? 250),
  projectRoot,
});
console.log(`\n${result.jobs} jobs (EVM and Solana alternating), three nodes, quorum 2\n`);
console.log(formatTimings(result.timings));
console.log(`\nfinalized jobs per minute: ${result.finalizedPerMinute.toFixed(1)}`);
console.log(`node gas per finalized job: ${result.nodeGasPerJob.toFixed(0)} (${result.submissionTransactions} node transactions in all)`);
console.log(`consumer gas per request: ${result.requestGasPerJob.toFixed(0)}`);

// `npm run bench:attest`: attested API answers on a fresh devnet with three circuit nodes connected to the
// API's attestation hub (quorum 2): latency median and p95 over BENCH_ATTEST_QUERIES (default 200)
// distinct queries of both chains, and over BENCH_CONDITION_QUERIES (default the same) fresh verdicts of
// 1, 4 and 16 leaves (POST /api/conditions, signed and unsigned), then with one node killed; the unattested path beside it (the same
// queries, and the bench:api throughput table). Targets: median ≤ 250 ms, p95 ≤ 600 ms. Then the hub run
// three ways (one API process; two workers; three processes on one Redis, the nodes spread over them),
// BENCH_SCALE_QUERIES (default 200) attested queries each, BENCH_SCALE_CONCURRENCY (default 4) in flight:
// answers per second, p50, p95 and failures (which must be 0 in every configuration). On two cores, 8 in
// flight brings the p95 to the 3-second quorum deadline (measured: 2.4–3.0 s, and one 503 in 300): the
// machine is then overloaded, not the hub wrong; 4 keeps the p95 near 1.5 s.
import path from "node:path";

import { benchmarkApi } from "../src/bench/api.ts";
import { measureAttestedLatency } from "../src/bench/attest.ts";
import { formatTimings } from "../src/bench/bridge-timing.ts";

const projectRoot = path.resolve(import.meta.dirname, "..");
const queries = Number(process.env.BENCH_ATTEST_QUERIES ?? 200);
const { timings, verifiedOnChain, scaleOut } = await measureAttestedLatency({
  queries,
  projectRoot,
  conditionQueries: Number(process.env.BENCH_CONDITION_QUERIES ?? queries),
  scaleOutQueries: Number(process.env.BENCH_SCALE_QUERIES ?? 200),
  concurrency: Number(process.env.BENCH_SCALE_CONCURRENCY ?? 4),
  log: (line) => console.log(line),
});
console.log(`\n${queries} distinct queries per row (EVM and Solana alternating), sent one after another; quorum 2\n`);
console.log(formatTimings(timings));
console.log(
  `\nattested answers and signed verdicts checked with the deployed AttestationVerifier (isAttestationValid, isConditionAttestationValid): ${verifiedOnChain}, all valid`,
);
const attested = timings.filter((row) => row.measurement.endsWith("both chains") && row.measurement.startsWith("attested"));
for (const row of attested) {
  const ok = row.medianMs <= 250 && row.p95Ms <= 600;
  console.log(
    `${row.measurement}: median ${row.medianMs.toFixed(0)} ms (target ≤ 250), p95 ${row.p95Ms.toFixed(0)} ms (target ≤ 600): ${ok ? "met" : "MISSED"}`,
  );
}

console.log("\nThe hub across processes: attested answers under concurrent load (3 nodes, quorum 2)\n");
console.log("| configuration | answers | answers/s | p50 ms | p95 ms | failures |\n|---|---:|---:|---:|---:|---:|");
for (const row of scaleOut)
  console.log(
    row.skipped !== undefined
      ? `| ${row.configuration} | skipped: ${row.skipped} | | | | |`
      : `| ${row.configuration} | ${row.answers} | ${row.answersPerSecond.toFixed(1)} | ${row.p50Ms.toFixed(0)} | ${row.p95Ms.toFixed(0)} | ${row.failures} |`,
  );
const failed = scaleOut.filter((row) => row.failures > 0);
for (const row of failed) console.log(`${row.configuration}: ${JSON.stringify(row.failureReasons)}`);
console.log(
  failed.length === 0
    ? "0 failed answers in every configuration: met"
    : `FAILED answers in: ${failed.map((row) => row.configuration).join(", ")}`,
);

console.log("\nThe unattested path's throughput (bench:api, same run):\n");
const { load } = await benchmarkApi(Number(process.env.BENCH_SECONDS ?? 5));
console.log("| route | req/s | p50 ms | p99 ms | non-2xx |\n|---|---:|---:|---:|---:|");
for (const row of load) console.log(`| ${row.label} | ${row.requestsPerSecond.toFixed(0)} | ${row.p50Ms} | ${row.p99Ms} | ${row.non2xx} |`);
console.log(`\nccq-evm (cached) / bare Fastify throughput: ${(load[0].requestsPerSecond / load[1].requestsPerSecond).toFixed(2)}`);

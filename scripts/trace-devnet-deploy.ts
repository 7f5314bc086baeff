// `npm run trace:devnet-deploy`: runs the devnet's two-chain deployment on fresh devnets, following every
// transaction of the deployer's key at each hop (the RPC front, anvil's log and pool, the L2 blocks), and prints
// the timeline of any run that failed or that anvil dropped a transaction in (src/devnet/deploy-trace.ts).
// TRACE_RUNS (default 5) deployments; TRACE_L2_BLOCK_TIME seconds per L2 block (default 1, the shared test
// devnet's). `npm run trace:devnet-deploy -- --coverage` deploys the instrumented contracts, as npm test does
// (after `hardhat build --coverage`). Exits 1 when a run failed or lost a transaction.
import path from "node:path";

import hre from "hardhat";

import { traceDevnetDeploys } from "../src/devnet/deploy-trace.ts";

const runs = Number(process.env.TRACE_RUNS ?? "5");
const l2BlockTime = Number(process.env.TRACE_L2_BLOCK_TIME ?? "1");
if (!Number.isSafeInteger(runs) || runs < 1 || !Number.isSafeInteger(l2BlockTime) || l2BlockTime < 1) {
  console.error("TRACE_RUNS and TRACE_L2_BLOCK_TIME must be positive integers.");
  process.exit(1);
}
const results = await traceDevnetDeploys({
  runs,
  l2BlockTime,
  disableCodeSizeLimit: hre.globalOptions.coverage === true,
  projectRoot: path.resolve(import.meta.dirname, ".."),
  log: (line) => console.log(line),
});
const failed = results.filter((result) => !result.ok || result.dropped.length > 0).length;
console.log(`${runs - failed} of ${runs} deployments went through without a lost transaction.`);
process.exit(failed === 0 ? 0 : 1);

// What `npm run chaos` runs (scripts/chaos.ts parses its arguments into CHAOS_SHORT and CHAOS_ONLY): starts a local stack of its own (stop `npm start` first),
// puts a steady load on its API, and runs the fault scenarios of docs/operations.md ("npm run chaos") one after
// the other: Redis killed, an API process killed, a node killed and one paused, the L2 RPC unreachable,
// the Solana endpoint restarted, an L1 reorg, PostgreSQL restarted, the webhook sender and the solver killed
// mid-work. Prints, per scenario, the answers right, refused, wrong and unanswered, the jobs finalized, expired
// and lost, and the time to recover; exits 1 when any answer was wrong, any job or order lost, an order filled
// twice, or a scenario did not recover within 10 s (the reorg's excepted).
import path from "node:path";

import { existsSync } from "node:fs";

import { formatRow, runChaos, TABLE_HEADER } from "../src/chaos/run.ts";
import { stackFilePath } from "../src/common/stack-file.ts";
import { startLocalStack } from "../src/devnet/local-stack.ts";
import { startPostgresServer } from "../src/devnet/postgres-server.ts";
import { stopOnSignals } from "../src/devnet/run-until-stopped.ts";

const short = process.env.CHAOS_SHORT === "true";
const only = process.env.CHAOS_ONLY?.split(",").map(Number);
const projectRoot = path.resolve(import.meta.dirname, "..");
if (existsSync(stackFilePath(projectRoot))) {
  console.error("a local stack is running (.devnet/stack.json exists): stop npm start first; the chaos run starts its own");
  process.exit(1);
}
console.log("Starting a local stack for the chaos run…");
// The API's keys on PostgreSQL when it is installed (scenario 7 restarts it), else on SQLite.
const postgres = await startPostgresServer();
const local = await startLocalStack({
  projectRoot,
  apiKeysDb: await postgres?.createDatabase(),
  deployContracts: true,
  runNetwork: true,
  apiPort: 0,
  creditsPort: 0,
  onProgress: (line) => console.log(`  ${line}`),
});
stopOnSignals(local);
let reports;
try {
  // The hub's default ping interval (ATTESTATION_PING_MS): the stack's API runs with it.
  reports = await runChaos(
    { devnet: local.devnet, network: local.network!, stack: local.stack, postgres, solver: local.solver },
    { short, only, pingMs: 15_000, log: (line) => console.log(line) },
  );
} finally {
  await local.stop();
  await postgres?.stop();
}
console.log(`\n${TABLE_HEADER}\n${reports.map(formatRow).join("\n")}`);
const failed = reports.filter(
  (report) =>
    report.answers.tally().wrong > 0 ||
    report.jobs.lost > 0 ||
    (report.measures.ordersLost ?? 0) + (report.measures.ordersFilledTwice ?? 0) > 0 ||
    (!report.name.includes("reorg") && !(report.recoverySeconds <= 10)),
);
if (failed.length > 0) {
  console.error(`\nBars not met: ${failed.map((report) => report.name).join("; ")}`);
  process.exitCode = 1;
}

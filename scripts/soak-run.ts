// What `npm run soak` runs (scripts/soak.ts parses its arguments into SOAK_MINUTES and SOAK_WARM_UP): starts a local stack of its own (stop `npm start` first), loads its API at
// the demo key's limits on both chains, plain and attested, and prints every minute each process's resident
// memory; at the end the answers' tally and each process's RSS slope after the first 5 minutes (MiB per
// hour). Exits 1 when an answer was not right or a process of ours grew by more than 20 MiB an hour.
import { existsSync } from "node:fs";
import path from "node:path";

import { soak } from "../src/chaos/soak.ts";
import { startLocalStack } from "../src/devnet/local-stack.ts";
import { stopOnSignals } from "../src/devnet/run-until-stopped.ts";
import { stackFilePath } from "../src/common/stack-file.ts";

const minutes = Number(process.env.SOAK_MINUTES ?? 30);
const warmUpMinutes = Number(process.env.SOAK_WARM_UP ?? 5);
const projectRoot = path.resolve(import.meta.dirname, "..");
if (existsSync(stackFilePath(projectRoot))) {
  console.error("a local stack is running (.devnet/stack.json exists): stop npm start first; the soak starts its own");
  process.exit(1);
}
const local = await startLocalStack({
  projectRoot,
  deployContracts: true,
  runNetwork: true,
  apiPort: 0,
  creditsPort: 0,
  onProgress: (line) => console.log(line),
});
stopOnSignals(local);
try {
  const report = await soak(local, { minutes, warmUpMinutes, projectRoot, log: (line) => console.log(line) });
  const { right, refused, wrong, unanswered } = report.answers;
  console.log(`\nanswers: ${right} right, ${refused} refused, ${wrong} wrong, ${unanswered} unanswered`);
  console.log(`\n| process | RSS at start (MiB) | RSS at end (MiB) | slope after minute ${warmUpMinutes} (MiB/h) |\n|---|---:|---:|---:|`);
  for (const entry of report.processes) {
    const present = entry.samples.filter((mib) => mib !== undefined);
    const slope = entry.slope === undefined ? "-" : entry.slope.toFixed(1);
    console.log(
      `| ${entry.name}${entry.exempt ? " (exempt)" : ""} | ${present[0]?.toFixed(0) ?? "-"} | ${present.at(-1)?.toFixed(0) ?? "-"} | ${slope} |`,
    );
  }
  const growing = report.processes.filter((entry) => !entry.exempt && (entry.slope ?? 0) > 20);
  if (right === 0 || refused + wrong + unanswered > 0 || growing.length > 0) process.exitCode = 1;
} finally {
  await local.stop();
}

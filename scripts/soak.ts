// `npm run soak -- --minutes 30 [--warm-up 5]`: a steady load at the demo key's limits against a local stack
// of its own (stop `npm start` first), with each process's memory every minute (docs/operations.md).
// `hardhat run` takes no arguments of the script's, so this reads them and runs scripts/soak-run.ts with them
// in its environment.
import { spawnSync } from "node:child_process";
import path from "node:path";
import { parseArgs } from "node:util";

const usage = "usage: npm run soak -- --minutes <whole minutes ≥ 1> [--warm-up <minutes left out of the slope, default 5>]";
let values: { minutes?: string; "warm-up"?: string };
try {
  ({ values } = parseArgs({ options: { minutes: { type: "string", default: "30" }, "warm-up": { type: "string", default: "5" } } }));
} catch (error) {
  console.error(`${(error as Error).message}\n${usage}`);
  process.exit(2);
}
const minutes = Number(values.minutes);
const warmUp = Number(values["warm-up"]);
if (!Number.isInteger(minutes) || minutes < 1 || !Number.isInteger(warmUp) || warmUp < 0 || warmUp >= minutes) {
  console.error(usage);
  process.exit(2);
}
const root = path.resolve(import.meta.dirname, "..");
const run = spawnSync("npx", ["hardhat", "run", "scripts/soak-run.ts"], {
  cwd: root,
  stdio: "inherit",
  env: {
    ...process.env,
    NODE_OPTIONS: "--disable-warning=ExperimentalWarning",
    SOAK_MINUTES: String(minutes),
    SOAK_WARM_UP: String(warmUp),
  },
});
process.exit(run.status ?? 1);

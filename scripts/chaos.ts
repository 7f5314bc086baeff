// `npm run chaos [-- --short] [-- --only 1,3]`: the fault scenarios of docs/operations.md ("npm run chaos")
// against a local stack of its own (stop `npm start` first). `hardhat run` takes no arguments of the
// script's, so this reads them and runs scripts/chaos-run.ts with them in its environment.
import { spawnSync } from "node:child_process";
import path from "node:path";
import { parseArgs } from "node:util";

import { SCENARIOS } from "../src/chaos/scenarios.ts";

const usage = "usage: npm run chaos [-- --short] [-- --only <scenario numbers, comma-separated>]";
let values: { short?: boolean; only?: string };
try {
  ({ values } = parseArgs({ options: { short: { type: "boolean" }, only: { type: "string" } } }));
} catch (error) {
  console.error(`${(error as Error).message}\n${usage}`);
  process.exit(2);
}
if (values.only !== undefined) {
  const known = SCENARIOS.map((scenario) => scenario.number);
  const asked = /^\d+(,\d+)*$/.test(values.only) ? values.only.split(",").map(Number) : [];
  const unknown = asked.filter((number) => !known.includes(number));
  if (asked.length === 0 || unknown.length > 0) {
    console.error(`${unknown.length > 0 ? `no scenario ${unknown.join(", ")}: ` : ""}the scenarios are ${known.join(", ")}\n${usage}`);
    process.exit(2);
  }
}
const root = path.resolve(import.meta.dirname, "..");
const run = spawnSync("npx", ["hardhat", "run", "scripts/chaos-run.ts"], {
  cwd: root,
  stdio: "inherit",
  env: {
    ...process.env,
    NODE_OPTIONS: "--disable-warning=ExperimentalWarning",
    CHAOS_SHORT: String(values.short === true),
    ...(values.only === undefined ? {} : { CHAOS_ONLY: values.only }),
  },
});
process.exit(run.status ?? 1);

// `npm run solver`: the intent layer's solver (docs/intents.md), configured by the environment
// (src/solver/config.ts: SOLVER_KEY, L1_RPC_URL, L2_RPC_URL, L2_WS_URL, ORIGIN_SETTLER, SOLVER_STATE_DIR, the fee,
// gas and rebalancing settings). On a machine running the local stack, the chains and the settlers the environment
// leaves out are the stack's (`.devnet/stack.json`); the key never is, since the stack runs a solver of its own on
// its account: name another one. SIGINT/SIGTERM stop it after the pass in progress.
import { existsSync } from "node:fs";
import path from "node:path";

import { pino } from "pino";

import { readStackFile, stackFilePath } from "../src/common/stack-file.ts";
import { loadSolverConfig, type SolverConfig } from "../src/solver/config.ts";
import { startSolver } from "../src/solver/main.ts";

const projectRoot = path.resolve(import.meta.dirname, "..");
const stackFile = stackFilePath(projectRoot);

/** The local stack's chains and settlers, for what the environment does not set. */
async function stackDefaults(): Promise<Record<string, string>> {
  if (!existsSync(stackFile)) return {};
  const stack = await readStackFile(stackFile);
  const defaults: Record<string, string | undefined> = {
    L1_RPC_URL: stack.l1?.rpcUrl,
    L2_RPC_URL: stack.l2?.rpcUrl,
    L2_WS_URL: stack.l2?.wsUrl,
    ORIGIN_SETTLER: stack.contracts?.l2?.OriginSettler,
  };
  return Object.fromEntries(Object.entries(defaults).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

let config: SolverConfig;
try {
  config = loadSolverConfig({ ...(await stackDefaults()), ...process.env });
} catch (error) {
  console.error((error as Error).message);
  process.exit(1);
}
const logger = pino({ level: config.LOG_LEVEL });
const running = await startSolver(config, logger);
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    logger.info({ signal }, "stopping");
    void running.stop().then(() => process.exit(0));
  });
}

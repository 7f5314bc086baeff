// `npm run node`: one circuit node, configured by the environment (src/node/config.ts: OWNERS_ALLOWLIST,
// NODE_CACHE_DIR, L2_RPC_URLS, L2_WS_URL, VERIFICATION_REGISTRY, EVM_RPC_URLS, SOLANA_RPC_URLS, …). The
// container runs this file. SIGINT/SIGTERM finish the pass and the transaction in progress, then exit.
import { pino } from "pino";

import { loadNodeConfig } from "../src/node/config.ts";
import { startNode, type RunningNode } from "../src/node/main.ts";
import { describe } from "../src/node/tx-sender.ts";

let config;
try {
  config = loadNodeConfig(process.env);
} catch (error) {
  console.error((error as Error).message);
  process.exit(1);
}
const logger = pino({ level: config.LOG_LEVEL });
const stopRequested = new AbortController();
let node: RunningNode | undefined;
const SHUTDOWN_DEADLINE_MS = 30_000;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    logger.info(`${signal}: stopping`);
    stopRequested.abort();
    setTimeout(() => process.exit(1), SHUTDOWN_DEADLINE_MS).unref();
    if (node !== undefined) void node.stop().then(() => process.exit(0), () => process.exit(1));
  });
}
try {
  node = await startNode(config, { logger, signal: stopRequested.signal });
  if (stopRequested.signal.aborted) await node.stop().then(() => process.exit(0));
} catch (error) {
  if (stopRequested.signal.aborted) process.exit(0);
  logger.error(`the node could not start: ${describe(error)}`);
  process.exit(1);
}

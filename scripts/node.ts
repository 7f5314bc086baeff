// `npm run node`: one circuit node, configured by the environment (src/node/config.ts: OWNERS_ALLOWLIST,
// NODE_CACHE_DIR, L2_RPC_URLS, L2_WS_URL, VERIFICATION_REGISTRY, EVM_RPC_URLS, SOLANA_RPC_URLS, …). The
// container runs this file. SIGINT/SIGTERM finish the pass and the transaction in progress, then exit 0.
import { pino } from "pino";

import { loadNodeConfig } from "../src/node/config.ts";
import { startNode, StopRequested, type RunningNode } from "../src/node/main.ts";
import { describeError } from "../src/common/describe-error.ts";

// Within Docker's default 10 s between SIGTERM and SIGKILL.
const SHUTDOWN_DEADLINE_MS = 8_000;

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
const stop = (signal: string) => {
  if (stopRequested.signal.aborted) return; // Ctrl-C under a parent reaches the node twice (terminal and parent)
  logger.info({ signal }, "stopping");
  stopRequested.abort();
  setTimeout(() => {
    logger.warn({ deadlineMs: SHUTDOWN_DEADLINE_MS }, "still stopping at the deadline; exiting");
    process.exit(1);
  }, SHUTDOWN_DEADLINE_MS).unref();
  if (node !== undefined)
    void node.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
};
process.on("SIGINT", () => stop("SIGINT"));
process.on("SIGTERM", () => stop("SIGTERM"));
try {
  node = await startNode(config, { logger, signal: stopRequested.signal });
} catch (error) {
  if (error instanceof StopRequested) process.exit(0);
  logger.error({ error: describeError(error) }, "the node could not start");
  process.exit(1);
}

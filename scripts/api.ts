// `npm run api`: the verification API, configured by the environment (src/api/config.ts: API_PORT,
// EVM_RPC_URLS, SOLANA_RPC_URLS, API_KEYS_DB, API_WORKERS, RATE_LIMIT_*, REDIS_URL, …). With more than
// one worker (default: one per core) this process is the cluster's primary and the workers are forks of
// this script. SIGINT/SIGTERM finish the requests in flight, write the usage counters, then exit.
import cluster from "node:cluster";

import { pino } from "pino";

import { startApiCluster } from "../src/api/cluster/primary.ts";
import { apiWorkerCount, loadApiConfig, type ApiConfig } from "../src/api/config.ts";
import { startApi } from "../src/api/main.ts";

// Requests in flight get this long to finish; then the process exits anyway.
const SHUTDOWN_DEADLINE_MS = 15_000;

let config: ApiConfig;
try {
  config = loadApiConfig(process.env);
} catch (error) {
  console.error(`The API could not start: ${(error as Error).message}`);
  process.exit(1);
}

/** Runs `stop` on the first SIGINT or SIGTERM (a cluster's processes may get both: Ctrl-C reaches them all). */
function onShutdownSignal(log: (message: string) => void, stop: () => Promise<unknown>, deadlineMs = SHUTDOWN_DEADLINE_MS): void {
  let stopping = false;
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      log(`${signal}: finishing requests in flight`);
      setTimeout(() => {
        log(`still finishing after ${deadlineMs} ms; exiting`);
        process.exit(1);
      }, deadlineMs).unref();
      stop().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    });
  }
}

const workers = apiWorkerCount(config);
if (cluster.isPrimary && workers > 1) {
  const log = pino({ level: config.LOG_LEVEL }).child({ component: "api-primary" });
  let running;
  try {
    running = await startApiCluster(config, workers, log);
  } catch (error) {
    console.error(`The API could not start: ${(error as Error).message}`);
    process.exit(1);
  }
  const runningCluster = running;
  // The workers' own deadline passes first.
  onShutdownSignal(
    (message) => log.info(message),
    () => runningCluster.stop(),
    SHUTDOWN_DEADLINE_MS + 5_000,
  );
  void runningCluster.ready.then(() =>
    log.info({ workers, host: config.API_HOST, port: config.API_PORT }, "API listening with worker processes"),
  );
  process.exit(await runningCluster.done);
} else {
  let api;
  try {
    api = await startApi(config, { clusterWorker: cluster.isWorker });
  } catch (error) {
    console.error(`The API could not start: ${(error as Error).message}`);
    process.exit(1);
  }
  const running = api;
  onShutdownSignal(
    (message) => running.app.log.info(message),
    () =>
      running.close().catch((error: unknown) => {
        running.app.log.error({ type: (error as Error)?.name }, "shutdown failed");
        throw error;
      }),
  );
}

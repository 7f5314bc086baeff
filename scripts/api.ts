// `npm run api`: the verification API, configured by the environment (src/api/config.ts: API_PORT,
// EVM_RPC_URLS, SOLANA_RPC_URLS, API_KEYS_DB, RATE_LIMIT_*, REDIS_URL, …). SIGINT/SIGTERM finish the
// requests in flight, then exit.
import { loadApiConfig } from "../src/api/config.ts";
import { startApi } from "../src/api/main.ts";

let api;
try {
  api = await startApi(loadApiConfig(process.env));
} catch (error) {
  console.error(`The API could not start: ${(error as Error).message}`);
  process.exit(1);
}
const running = api;
// Requests in flight get this long to finish; then the process exits anyway.
const SHUTDOWN_DEADLINE_MS = 15_000;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    running.app.log.info(`${signal}: finishing requests in flight`);
    setTimeout(() => {
      running.app.log.error(`requests still in flight after ${SHUTDOWN_DEADLINE_MS} ms; exiting`);
      process.exit(1);
    }, SHUTDOWN_DEADLINE_MS).unref();
    running.close().then(
      () => process.exit(0),
      (error: unknown) => {
        running.app.log.error({ type: (error as Error)?.name }, "shutdown failed");
        process.exit(1);
      },
    );
  });
}

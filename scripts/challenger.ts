// `npm run challenger`: the network's benchmark, configured by the environment (src/challenger/config.ts:
// CHALLENGER_KEY, L2_RPC_URL, VERIFICATION_REGISTRY, CHALLENGE_TARGETS, CHALLENGE_MEAN_INTERVAL_SECONDS,
// CHALLENGE_BURST_MIN/MAX). Opens bursts of jobs at random times; its account needs CHALLENGER_ROLE on
// NodeRegistry (granted by governance) and staked collateral. SIGINT/SIGTERM stop it after the burst in progress.
import { pino } from "pino";

import { loadChallengerConfig } from "../src/challenger/config.ts";
import { startChallenger } from "../src/challenger/main.ts";

let config;
try {
  config = loadChallengerConfig(process.env);
} catch (error) {
  console.error((error as Error).message);
  process.exit(1);
}
const logger = pino({ level: config.LOG_LEVEL });
const challenger = await startChallenger(config, logger);
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    logger.info({ signal }, "stopping");
    void challenger.stop().then(() => process.exit(0));
  });
}

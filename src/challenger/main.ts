import { readFile } from "node:fs/promises";

import { JsonRpcProvider, NonceManager, Wallet } from "ethers";
import type { Logger } from "pino";

import type { VerificationRegistry } from "../../typechain-types/index.ts";
import { contractAt } from "../common/artifacts.ts";
import { describeError } from "../common/describe-error.ts";
import { Challenger, challengeTargetsSchema } from "./challenger.ts";
import { redactedChallengerConfig, type ChallengerConfig } from "./config.ts";

export interface RunningChallenger {
  address: string;
  stop(): Promise<void>;
}

/** Reads the targets, checks the account holds the role and collateral, and starts the schedule. */
export async function startChallenger(config: ChallengerConfig, logger: Logger): Promise<RunningChallenger> {
  const parsed = challengeTargetsSchema.safeParse(JSON.parse(await readFile(config.CHALLENGE_TARGETS, "utf8")));
  if (!parsed.success)
    throw new Error(`CHALLENGE_TARGETS: ${parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; ")}`);
  const provider = new JsonRpcProvider(config.L2_RPC_URL, undefined, { staticNetwork: true });
  const wallet = new Wallet(config.CHALLENGER_KEY, provider);
  // The compiled artifact's ABI (as the node reads its contracts): TypeChain's factories are not run, only its types.
  const registry = contractAt<VerificationRegistry>("VerificationRegistry", config.VERIFICATION_REGISTRY, new NonceManager(wallet));
  logger.info({ config: redactedChallengerConfig(config), address: wallet.address, targets: parsed.data.length }, "challenger starting");
  const challenger = new Challenger({
    registry,
    targets: parsed.data,
    meanIntervalMs: config.CHALLENGE_MEAN_INTERVAL_SECONDS * 1000,
    burstMin: config.CHALLENGE_BURST_MIN,
    burstMax: config.CHALLENGE_BURST_MAX,
    onBurst: (outcome) => {
      if ("sent" in outcome)
        logger.info(
          { jobs: outcome.sent.map(({ jobId, target }) => ({ jobId: jobId.toString(), chain: target.chain })) },
          "challenge burst opened",
        );
      // A refused burst (collateral spent, the L2 down) is said and the schedule goes on.
      else logger.warn({ reason: describeError(outcome.error) }, "challenge burst failed");
    },
  });
  challenger.start();
  return {
    address: wallet.address,
    async stop() {
      await challenger.stop();
      provider.destroy();
    },
  };
}

import type { TransactionReceipt } from "ethers";

import type { VerificationRegistry } from "../../typechain-types/index.ts";
import { IgnoreReason } from "@avn/protocol/constants";

// A submission skipped for these can still count with its other licenses: one of them voted meanwhile
// through another operator, or is no longer delegated here. The others (the job closed or filled up)
// leave nothing to vote on.
const ANSWER_AGAIN = new Set<number>([IgnoreReason.alreadyVoted, IgnoreReason.licenseNotLive]);

/**
 * The jobs of a mined `submitResults` or `revealResults` whose submission from `operator` the registry skipped for a reason
 * the node can overcome on its next pass (by voting with the licenses that still may).
 */
export function jobsToAnswerAgain(receipt: TransactionReceipt, registry: VerificationRegistry, operator: string): bigint[] {
  const registryAddress = receipt.to?.toLowerCase();
  const jobs: bigint[] = [];
  for (const log of receipt.logs) {
    if (log.address.toLowerCase() !== registryAddress) continue;
    const parsed = registry.interface.parseLog(log);
    if (parsed?.name !== "SubmissionIgnored") continue;
    const [jobId, skippedOperator, reason] = parsed.args as unknown as [bigint, string, bigint];
    if (skippedOperator.toLowerCase() === operator.toLowerCase() && ANSWER_AGAIN.has(Number(reason))) jobs.push(jobId);
  }
  return jobs;
}

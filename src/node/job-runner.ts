import type { Provider } from "ethers";

import type { VerificationRegistry } from "../../typechain-types/index.ts";
import { answerJob, type Answer } from "./answers.ts";
import type { EvmBalanceReader } from "../chains/evm/balance-reader.ts";
import type { SolanaBalanceReader } from "../chains/solana/balance-reader.ts";
import type { NodeStateStore, VoteIntent } from "./state-store.ts";
import { describe, type TxSender } from "./tx-sender.ts";

const JOB_OPEN = 1n;
// Gas a finalizing vote needs beyond a plain one (the snapshot's finalizing vote costs about 447k in all),
// plus what the contract keeps aside for the consumer's callback (its gas limit, 1/63 more, and a buffer).
const FINALIZATION_GAS = 450_000n;
const CALLBACK_GAS_BUFFER = 50_000n;
// Providers cap eth_getLogs ranges; 2,000 blocks is within every common limit.
const MAX_LOG_RANGE = 2_000;

export interface JobRunnerOptions {
  provider: Provider;
  registry: VerificationRegistry;
  registryAddress: string;
  readers: { evm: EvmBalanceReader; solana: SolanaBalanceReader };
  store: NodeStateStore;
  sender: TxSender;
  /** The licenses to vote for now (delegated to this burner, owned by an allowlisted wallet). */
  licenses: () => bigint[];
  maxSubmissionsPerTx: number;
  maxQueryResultBytes: number;
  log: (level: "debug" | "info" | "warn" | "error", message: string) => void;
  onVotesSent?: (jobs: number, votes: number) => void;
}

interface PreparedSubmission {
  /** Gas to add to the estimate in case this vote is the one that finalizes the job. */
  finalizationGas: bigint;
  jobId: bigint;
  jobBlock: number;
  licenseIds: bigint[];
  answer: Answer;
}

/**
 * One pass of the job loop: reads `VerificationRequested` from the block after the journal's cursor,
 * answers every open job some license of this node has not voted on, and submits the answers in
 * `submitResults` batches. The cursor moves past a block only when every job in it is handled (voted,
 * closed, or unanswerable); a job whose read or submission failed keeps the cursor before its block so
 * the next pass retries it. The journal and `hasVoted` make a rescan harmless: nothing is voted twice.
 * Returns whether blocks are left to scan (the caller runs again at once).
 */
export async function runJobPass(options: JobRunnerOptions, startBlock: () => Promise<number>): Promise<boolean> {
  const { provider, registry, store } = options;
  const licenses = options.licenses();
  if (licenses.length === 0) return false;
  const head = await provider.getBlockNumber();
  const from = (store.cursor() ?? (await startBlock()) - 1) + 1;
  if (from > head) return false;
  const to = Math.min(head, from + MAX_LOG_RANGE - 1);
  const events = await registry.queryFilter(registry.filters.VerificationRequested(), from, to);
  const now = BigInt((await provider.getBlock(to))?.timestamp ?? Math.floor(Date.now() / 1000));

  let retryFrom: number | undefined;
  const failedAt = (block: number) => {
    retryFrom = retryFrom === undefined ? block : Math.min(retryFrom, block);
  };
  const prepared = await Promise.all(
    events.map(async (event): Promise<PreparedSubmission | undefined> => {
      const jobId = event.args.jobId;
      try {
        let todo = licenses.filter((licenseId) => !store.hasVote(jobId, licenseId));
        if (todo.length === 0) return undefined;
        const job = await registry.getJob(jobId);
        if (job.status !== JOB_OPEN || job.deadline <= now) return undefined;
        const [voted, callbackGasLimit] = await Promise.all([
          Promise.all(todo.map((licenseId) => registry.hasVoted(jobId, licenseId))),
          registry.callbackGasLimitOf(job.requester),
        ]);
        todo = todo.filter((_, index) => !voted[index]);
        if (todo.length === 0) return undefined;
        const outcome = await answerJob({ chain: Number(job.chain), owner: job.owner, asset: job.asset }, options.readers);
        if (outcome.kind === "unanswerable") {
          options.log("warn", `job ${jobId}: not answered (${outcome.reason}); it will expire and refund its requester`);
          return undefined;
        }
        if ((outcome.answer.queryResult.length - 2) / 2 > options.maxQueryResultBytes) {
          options.log("warn", `job ${jobId}: the query result exceeds the registry's ${options.maxQueryResultBytes} bytes; not answered`);
          return undefined;
        }
        const finalizationGas = FINALIZATION_GAS + (callbackGasLimit === 0n ? 0n : callbackGasLimit + callbackGasLimit / 63n + CALLBACK_GAS_BUFFER);
        return { jobId, jobBlock: event.blockNumber, licenseIds: todo, answer: outcome.answer, finalizationGas };
      } catch (error) {
        options.log("warn", `job ${jobId}: ${describe(error)} (retrying on the next pass)`);
        failedAt(event.blockNumber);
        return undefined;
      }
    }),
  );

  const ready = prepared.filter((submission): submission is PreparedSubmission => submission !== undefined);
  for (let start = 0; start < ready.length; start += options.maxSubmissionsPerTx) {
    const batch = ready.slice(start, start + options.maxSubmissionsPerTx);
    const votes: VoteIntent[] = batch.flatMap(({ jobId, jobBlock, licenseIds }) => licenseIds.map((licenseId) => ({ jobId, licenseId, jobBlock })));
    const data = registry.interface.encodeFunctionData("submitResults", [
      batch.map(({ jobId, licenseIds, answer }) => ({
        jobId,
        licenseIds,
        balance: answer.balance,
        queryResult: answer.queryResult,
        sourceBlock: answer.sourceBlock,
      })),
    ]);
    try {
      const extraGas = batch.reduce((sum, { finalizationGas }) => sum + finalizationGas, 0n);
      await options.sender.send("submitResults", options.registryAddress, data, votes, extraGas);
      options.onVotesSent?.(batch.length, votes.length);
      options.log("info", `submitted ${batch.length} job answer(s): jobs ${batch.map(({ jobId }) => jobId).join(", ")}`);
    } catch (error) {
      options.log("warn", `submitting jobs ${batch.map(({ jobId }) => jobId).join(", ")} failed: ${describe(error)} (retrying on the next pass)`);
      for (const { jobBlock } of batch) failedAt(jobBlock);
    }
  }

  const handledUpTo = retryFrom === undefined ? to : retryFrom - 1;
  if (handledUpTo >= from) store.setCursor(handledUpTo);
  return retryFrom === undefined && to < head;
}

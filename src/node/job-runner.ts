import { hexlify, randomBytes, type Provider } from "ethers";
import type { Logger } from "pino";

import { revealCommitmentOf } from "@avn/protocol/commit-reveal";

import type { VerificationRegistry } from "../../typechain-types/index.ts";
import { answerJob, type Answer, type SourceReaders } from "./answers.ts";
import type { NodeStateStore, SourceBlock, VoteIntent } from "./state-store.ts";
import { describeError } from "../common/describe-error.ts";
import type { TxSender } from "./tx-sender.ts";
import { JobStatus, MAX_VOTES_PER_JOB } from "@avn/protocol/constants";

// Gas a vote may need beyond the estimate in case it turns out to finalize its job (other nodes' votes
// landing first): the job's own writes and the first result of its subject or epoch (fresh slots), plus
// per settled vote its license's account and the move of an earlier epoch's votes, plus what the
// contract keeps aside for the job's callback (its gas limit, 1/63 more, and a buffer). The query result
// is a hash, so nothing here grows with the answer's size (measured: `npm run bench:gas`).
const FINALIZATION_BASE_GAS = 100_000n;
const FINALIZATION_GAS_PER_VOTE = 32_000n;
const CALLBACK_GAS_BUFFER = 50_000n;
// A plain vote's share of a batch's estimate, for sizing batches before estimating them.
const VOTE_GAS = 60_000n;

export interface JobRunnerOptions {
  provider: Provider;
  registry: VerificationRegistry;
  registryAddress: string;
  readers: SourceReaders;
  /**
   * The Ethereum source's canonical chain: a reveal whose answers read a block that is no longer there
   * (reorged away) is withdrawn, and its jobs answered again. Without it, reveals are sent unchecked.
   */
  canonical?: { blockHashAt(number: bigint): Promise<string | undefined> };
  store: NodeStateStore;
  /** The burner: the operator its commitments are bound to. */
  operator: string;
  /** Journals the votes with the transaction that carries them, then broadcasts it. */
  sender: Pick<TxSender, "send">;
  /** The licenses to vote for now (delegated to this burner, owned by an allowlisted wallet). */
  licenses: () => bigint[];
  maxSubmissionsPerTx: number;
  /** Most gas one submitResults transaction may ask for (well below the block gas limit). */
  maxGasPerTx: bigint;
  /** Blocks below the head a job must be to be scanned (reorg safety). */
  confirmations: number;
  /** Most blocks per eth_getLogs (providers cap ranges). */
  logBlockRange: number;
  /** Most jobs answered in one pass; the rest wait for the next (the cursor stops at a block boundary). */
  maxJobsPerPass: number;
  logger: Logger;
  onVotesSent?: (jobs: number, votes: number) => void;
  /** Told when a commit is mined: its reveal can be sent (the next pass sends it). */
  onCommitMined?: () => void;
  /**
   * Told at the end of each pass that read the chain: the first block it read, the block the cursor is at
   * now (every job up to it handled, its submissions sent) and the highest block it could read (the head
   * less the confirmations).
   */
  onScanned?: (scan: { fromBlock: number; toBlock: number; head: number }) => void;
}

interface PreparedSubmission {
  jobId: bigint;
  jobBlock: number;
  owner: string;
  asset: string;
  licenseIds: bigint[];
  answer: Answer;
  /** Gas to add to the estimate in case this vote is the one that finalizes the job. */
  finalizationGas: bigint;
}

/**
 * One pass of the job loop: first reveals the answers of every commit mined since (`revealReady`); then
 * reads `VerificationRequested` from the block after the journal's cursor (or an earlier block a lost
 * transaction asked to rescan), answers every open job some license of this node has not voted on, and
 * commits to the answers in batches sized by count and gas (`commitResults`, the reveal journaled with it:
 * docs/node.md, "Commit, then reveal"). The cursor
 * moves past a block only when every job in it is handled (voted, closed, or unanswerable); a job whose
 * read or submission failed keeps the cursor before its block so the next pass retries it. The journal
 * and `hasVoted` make a rescan harmless: nothing is voted twice. Returns whether blocks are left to scan.
 */
export async function runJobPass(options: JobRunnerOptions, startBlock: () => Promise<number>): Promise<boolean> {
  const { provider, registry, store } = options;
  const logger = options.logger.child({ component: "job-runner" });
  await revealReady(options, logger);
  const licenses = options.licenses();
  if (licenses.length === 0) return false;
  const rescan = store.takeRescan();
  const cursor = store.cursor() ?? (await startBlock()) - 1;
  if (rescan !== undefined && rescan - 1 < cursor) store.setCursor(Math.max(rescan - 1, -1));
  const head = (await provider.getBlockNumber()) - options.confirmations;
  const from = (store.cursor() ?? cursor) + 1;
  if (from > head) {
    options.onScanned?.({ fromBlock: from, toBlock: from - 1, head });
    return false;
  }
  let to = Math.min(head, from + options.logBlockRange - 1);
  let events = await registry.queryFilter(registry.filters.VerificationRequested(), from, to);
  if (events.length > options.maxJobsPerPass) {
    // Whole blocks only: stop before the block of the first job left over (or after it, if it is the first block).
    const lastBlock = events[options.maxJobsPerPass].blockNumber;
    to = lastBlock > from ? lastBlock - 1 : lastBlock;
    events = events.filter((event) => event.blockNumber <= to);
  }
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
        if (job.status !== JobStatus.open || job.deadline <= now) return undefined;
        const voted = await Promise.all(todo.map((licenseId) => registry.hasVoted(jobId, licenseId)));
        todo = todo.filter((_, index) => !voted[index]);
        if (todo.length === 0) return undefined;
        // The job keeps only a hash of what it asks; its request event says it.
        const { owner, asset } = event.args;
        const outcome = await answerJob({ chain: Number(job.chain), owner, asset }, options.readers);
        if (outcome.kind === "unanswerable") {
          logger.warn({ jobId: String(jobId), reason: outcome.reason }, "job not answered: it will expire and refund its requester");
          return undefined;
        }
        return {
          jobId,
          jobBlock: event.blockNumber,
          owner,
          asset,
          licenseIds: todo,
          answer: outcome.answer,
          finalizationGas: finalizationGasOf(job),
        };
      } catch (error) {
        logger.warn({ jobId: String(jobId), error: describeError(error) }, "reading or answering a job failed; retrying on the next pass");
        failedAt(event.blockNumber);
        return undefined;
      }
    }),
  );

  for (const batch of batches(
    prepared.filter((submission) => submission !== undefined),
    options,
  )) {
    const votes: VoteIntent[] = batch.flatMap(({ jobId, jobBlock, licenseIds }) =>
      licenseIds.map((licenseId) => ({ jobId, licenseId, jobBlock })),
    );
    // The answers stay secret until the commit is mined: a fresh salt, and the reveal's whole calldata bound
    // to this operator, are what the commitment hides.
    const reveal = registry.interface.encodeFunctionData("revealResults", [
      hexlify(randomBytes(32)),
      batch.map(({ jobId, owner, asset, licenseIds, answer }) => ({
        jobId,
        licenseIds,
        owner,
        asset,
        balance: answer.balance,
        queryResultHash: answer.queryResultHash,
        sourceBlock: answer.sourceBlock,
      })),
    ]);
    const commitment = revealCommitmentOf(options.operator as `0x${string}`, reveal as `0x${string}`);
    const commit = registry.interface.encodeFunctionData("commitResults", [commitment]);
    const jobs = batch.map(({ jobId }) => String(jobId));
    const sourceBlocks = new Map<string, SourceBlock>();
    for (const { answer } of batch)
      if (answer.sourceBlockHash !== undefined)
        sourceBlocks.set(`${answer.sourceBlock}:${answer.sourceBlockHash}`, { number: answer.sourceBlock, hash: answer.sourceBlockHash });
    try {
      const extraGas = batch.reduce((sum, { finalizationGas }) => sum + finalizationGas, 0n);
      const { outcome } = await options.sender.send("commitResults", options.registryAddress, commit, votes, 0n, {
        data: reveal,
        extraGas,
        sourceBlocks: [...sourceBlocks.values()],
      });
      void outcome.then((result) => {
        if (result === "mined") options.onCommitMined?.();
      });
      options.onVotesSent?.(batch.length, votes.length);
      logger.info({ jobs, votes: votes.length }, "committed to job answers");
    } catch (error) {
      logger.warn({ jobs, error: describeError(error) }, "committing to job answers failed; retrying on the next pass");
      for (const { jobBlock } of batch) failedAt(jobBlock);
    }
  }

  const handledUpTo = retryFrom === undefined ? to : retryFrom - 1;
  if (handledUpTo >= from) store.setCursor(handledUpTo);
  options.onScanned?.({ fromBlock: from, toBlock: Math.max(handledUpTo, from - 1), head });
  return retryFrom === undefined && to < head;
}

/**
 * Sends the reveal of every commit mined and not revealed yet, oldest first: each casts its votes in a block
 * after its commitment's. A reveal whose estimate fails (it would revert) stays journaled and is tried again
 * on the next pass.
 */
export async function revealReady(
  options: Pick<JobRunnerOptions, "store" | "sender" | "registryAddress" | "canonical">,
  logger: Logger,
): Promise<void> {
  for (const reveal of options.store.readyReveals()) {
    try {
      const canonical = await checkSourceBlocks(reveal.sourceBlocks, options.canonical);
      // The source has no block at that number (a lagging upstream, a failover behind): ask again next pass.
      if (canonical === "unknown") continue;
      if (canonical !== "canonical") {
        const rescanFrom = options.store.withdrawReveal(reveal.commitTxId);
        if (rescanFrom !== undefined) options.store.requestRescan(rescanFrom);
        logger.warn(
          { commitTxId: reveal.commitTxId, block: String(canonical.number), hash: canonical.hash },
          "an Ethereum block the committed answers were read at was reorged away: the reveal is withdrawn and its jobs answered again",
        );
        continue;
      }
      const { id } = await options.sender.send("revealResults", options.registryAddress, reveal.data, [], reveal.extraGas);
      options.store.markRevealed(reveal.commitTxId, id);
      logger.info({ commitTxId: reveal.commitTxId, revealTxId: id }, "revealed committed job answers");
    } catch (error) {
      logger.warn(
        { commitTxId: reveal.commitTxId, error: describeError(error) },
        "revealing job answers failed; retrying on the next pass",
      );
    }
  }
}

/**
 * Whether `blocks` are all still Ethereum's: "canonical"; the first whose number holds another block now
 * (reorged away); or "unknown" when the source has no block at one of the numbers (an upstream behind the
 * one the answers were read from is not a reorg). Asked right before a reveal: a vote revealed is final, and
 * one for a block that is no longer Ethereum's would record a balance the chain never settled on.
 */
async function checkSourceBlocks(
  blocks: readonly SourceBlock[],
  canonical: JobRunnerOptions["canonical"],
): Promise<"canonical" | "unknown" | SourceBlock> {
  if (canonical === undefined) return "canonical";
  for (const block of blocks) {
    const hash = await canonical.blockHashAt(block.number);
    if (hash === undefined) return "unknown";
    if (hash.toLowerCase() !== block.hash.toLowerCase()) return block;
  }
  return "canonical";
}

/**
 * The gas to add for a vote that may finalize `job`: its settlement writes one account per vote the job
 * holds then, and the callback gets the limit stored with the job. The votes are counted at the most a job
 * can hold, not as read: other nodes' votes can land between the read and this transaction, and a limit
 * too low would revert the whole batch (unused gas is not charged).
 */
export function finalizationGasOf(job: { callbackGasLimit: bigint }): bigint {
  const callback = job.callbackGasLimit;
  const callbackGas = callback === 0n ? 0n : callback + callback / 63n + CALLBACK_GAS_BUFFER;
  return FINALIZATION_BASE_GAS + FINALIZATION_GAS_PER_VOTE * MAX_VOTES_PER_JOB + callbackGas;
}

/** Splits submissions into transactions of at most `maxSubmissionsPerTx` answers and `maxGasPerTx` gas. */
function* batches(
  submissions: PreparedSubmission[],
  options: Pick<JobRunnerOptions, "maxSubmissionsPerTx" | "maxGasPerTx">,
): Generator<PreparedSubmission[]> {
  let batch: PreparedSubmission[] = [];
  let gas = 0n;
  for (const submission of submissions) {
    const cost = VOTE_GAS * BigInt(submission.licenseIds.length) + submission.finalizationGas;
    if (batch.length > 0 && (batch.length >= options.maxSubmissionsPerTx || gas + cost > options.maxGasPerTx)) {
      yield batch;
      batch = [];
      gas = 0n;
    }
    batch.push(submission);
    gas += cost;
  }
  if (batch.length > 0) yield batch;
}

import type { Logger } from "pino";

import { describeError } from "../common/describe-error.ts";
import { PollingLoop } from "../common/polling-loop.ts";
import type { NodeConfig } from "./config.ts";
import type { ContractsByProvider } from "./contracts.ts";
import type { DelegationWatcher } from "./delegation-watcher.ts";
import type { NodeMetrics } from "./health.ts";
import { runJobPass, type JobRunnerOptions } from "./job-runner.ts";
import type { L2Endpoints } from "./l2-endpoints.ts";
import type { L2Chain } from "./startup.ts";
import type { NodeStateStore } from "./state-store.ts";

export interface JobLoopOptions {
  config: Pick<
    NodeConfig,
    | "START_BLOCK"
    | "POLL_INTERVAL_MS"
    | "MAX_SUBMISSIONS_PER_TX"
    | "MAX_GAS_PER_TX"
    | "CONFIRMATIONS"
    | "LOG_BLOCK_RANGE"
    | "MAX_JOBS_PER_PASS"
  >;
  chain: L2Chain;
  endpoints: L2Endpoints;
  contracts: ContractsByProvider;
  readers: JobRunnerOptions["readers"];
  canonical?: JobRunnerOptions["canonical"];
  journal: NodeStateStore;
  sender: JobRunnerOptions["sender"];
  /** The burner: its commitments are bound to it. */
  operator: string;
  delegation: DelegationWatcher;
  metrics: NodeMetrics;
  logger: Logger;
  onError: () => void;
}

export interface JobLoop {
  loop: PollingLoop<boolean>;
  /** Where the scan starts when the journal has no cursor yet. */
  startBlock: () => Promise<number>;
}

/**
 * The job loop: one single-flight pass (`runJobPass`) run by polling and woken by the WebSocket or a
 * rescan, so live jobs and catch-up take one code path. A pass that leaves blocks to scan wakes the next
 * one at once; a failed pass is retried at the next tick, on the next L2 URL.
 */
export function createJobLoop(options: JobLoopOptions): JobLoop {
  const { config, endpoints, journal, metrics } = options;
  const logger = options.logger.child({ component: "job-loop" });
  const startBlock = async () => {
    if (config.START_BLOCK !== undefined) return config.START_BLOCK;
    // No journal yet: jobs older than one timeout are closed. Blocks come at least once a second here.
    return Math.max(0, (await endpoints.current.getBlockNumber()) - options.chain.jobTimeout);
  };
  // Whether the last pass left the cursor at the head, and the first block read on the way there: the node
  // says once that it has read up to the head (every job up to `toBlock` handled, its votes sent), after
  // its start and after each time it fell behind (a pass that failed or left blocks to read).
  let atHead = false;
  let catchUpFrom: number | undefined;
  const onScanned = ({ fromBlock, toBlock, head }: { fromBlock: number; toBlock: number; head: number }) => {
    if (fromBlock <= toBlock) catchUpFrom ??= fromBlock;
    if (toBlock < head) {
      atHead = false;
      return;
    }
    if (!atHead) logger.info(catchUpFrom === undefined ? { toBlock } : { fromBlock: catchUpFrom, toBlock }, "scanned up to the L2 head");
    atHead = true;
    catchUpFrom = undefined;
  };
  const loop: PollingLoop<boolean> = new PollingLoop(
    async () => {
      const provider = endpoints.current;
      const more = await runJobPass(
        {
          provider,
          registry: options.contracts.on(provider).registry,
          registryAddress: options.chain.addresses.registry,
          readers: options.readers,
          canonical: options.canonical,
          store: journal,
          sender: options.sender,
          operator: options.operator,
          licenses: () => options.delegation.delegated,
          maxSubmissionsPerTx: config.MAX_SUBMISSIONS_PER_TX,
          maxGasPerTx: config.MAX_GAS_PER_TX,
          confirmations: config.CONFIRMATIONS,
          logBlockRange: config.LOG_BLOCK_RANGE,
          maxJobsPerPass: config.MAX_JOBS_PER_PASS,
          logger: options.logger,
          onVotesSent: (jobs, votes) => {
            metrics.jobsAnswered.inc(jobs);
            metrics.votesSent.inc(votes);
          },
          onScanned,
          // A mined commit's reveal goes out with the next pass: run it now, not at the next poll.
          onCommitMined: () => loop.wake(),
        },
        startBlock,
      );
      metrics.lastBlock.set(journal.cursor() ?? 0);
      if (more) loop.wake();
      return more;
    },
    config.POLL_INTERVAL_MS,
    (error) => {
      atHead = false;
      metrics.passErrors.inc();
      logger.warn({ error: describeError(error) }, "job pass failed; retrying");
      options.onError();
    },
  );
  return { loop, startBlock };
}

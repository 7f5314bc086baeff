import type { ContractEventName, Hex, WatchContractEventOnLogsParameter } from "viem";

import type { verificationRegistryAbi } from "../../generated/abis";

/** How many of the latest jobs the table keeps. */
export const JOB_WINDOW = 50;

export interface JobRow {
  id: bigint;
  /** Known from `VerificationRequested` (or `VerificationFulfilled`); a row without it is not shown. */
  chain?: number;
  owner?: Hex;
  asset?: Hex;
  status: "open" | "fulfilled" | "expired";
  balance?: bigint;
  /** Accepted votes (`VoteSubmitted`): a finalized job's `getJob` reads 0 votes, its events keep them. */
  votes: number;
}

export type RegistryLog = WatchContractEventOnLogsParameter<
  typeof verificationRegistryAbi,
  ContractEventName<typeof verificationRegistryAbi>,
  true
>[number];

/**
 * Folds decoded registry logs into the rows: a job's subject from its request (or result), its accepted
 * votes, its result or expiry. Order-independent, as a job never goes back to open, so history and live
 * logs may interleave. Jobs below `firstId` get no new row; only the newest JOB_WINDOW are kept.
 */
export function foldJobLogs(previous: ReadonlyMap<bigint, JobRow>, logs: readonly RegistryLog[], firstId: bigint): Map<bigint, JobRow> {
  const jobs = new Map(previous);
  const row = (id: bigint): JobRow | undefined => {
    // A live event of a job older than the window (a late vote or expiry) is not worth a row.
    if (id < firstId && !jobs.has(id)) return undefined;
    const existing = jobs.get(id) ?? { id, status: "open", votes: 0 };
    const copy = { ...existing };
    jobs.set(id, copy);
    return copy;
  };
  for (const log of logs) {
    switch (log.eventName) {
      case "VerificationRequested": {
        const job = row(log.args.jobId);
        if (job) Object.assign(job, { chain: log.args.chain, owner: log.args.owner, asset: log.args.asset });
        break;
      }
      case "VoteSubmitted": {
        const job = row(log.args.jobId);
        if (job) job.votes += 1;
        break;
      }
      case "VerificationFulfilled": {
        const job = row(log.args.jobId);
        if (job)
          Object.assign(job, {
            chain: log.args.chain,
            owner: log.args.owner,
            asset: log.args.asset,
            status: "fulfilled",
            balance: log.args.balance,
          });
        break;
      }
      case "JobExpired": {
        const job = row(log.args.jobId);
        if (job) job.status = "expired";
        break;
      }
    }
  }
  // Keep the newest JOB_WINDOW ids.
  const ids = [...jobs.keys()].sort((a, b) => (a < b ? 1 : -1));
  for (const id of ids.slice(JOB_WINDOW)) jobs.delete(id);
  return jobs;
}

/**
 * The logs of `logs` not in `seen` (by transaction hash and log index), which are added to it: the
 * subscription starts before the history is read, so a log may arrive twice.
 */
export function unseenLogs(seen: Set<string>, logs: readonly RegistryLog[]): RegistryLog[] {
  return logs.filter((log) => {
    const key = `${log.transactionHash}:${log.logIndex}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

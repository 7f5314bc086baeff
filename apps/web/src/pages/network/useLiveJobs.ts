import { useEffect, useState } from "react";
import type { Address, ContractEventName, Hex, PublicClient, WatchContractEventOnLogsParameter } from "viem";

import { verificationRegistryAbi } from "../../generated/abis";
import { describeError } from "../../lib/errors";

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

type RegistryLog = WatchContractEventOnLogsParameter<
  typeof verificationRegistryAbi,
  ContractEventName<typeof verificationRegistryAbi>,
  true
>[number];

/** Folds logs into the rows. Order-independent: a job never goes back to open, so history and live logs may interleave. */
function applyLogs(previous: ReadonlyMap<bigint, JobRow>, logs: readonly RegistryLog[], firstId: bigint): Map<bigint, JobRow> {
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
 * The latest jobs of the verification registry, kept current from its events: the history of the last
 * JOB_WINDOW job ids is read once, and a subscription (or HTTP polling) updates the rows in place.
 * The subscription starts before the history is read so no event falls between the two; logs seen twice
 * are skipped by transaction hash and log index.
 */
export function useLiveJobs(client: PublicClient, pushes: boolean, registry: Address, fromBlock: bigint) {
  const [jobs, setJobs] = useState<ReadonlyMap<bigint, JobRow>>(new Map());
  const [loaded, setLoaded] = useState(false);
  const [error, setError] = useState<string>();
  /** Whether new logs arrive over a WebSocket subscription (false: HTTP polling). */
  const [pushed, setPushed] = useState(pushes);

  useEffect(() => {
    let active = true;
    let firstId = 0n; // unknown until nextJobId is read: accept every job meanwhile
    const seen = new Set<string>();
    setJobs(new Map());
    setLoaded(false);
    setError(undefined);

    const apply = (logs: readonly RegistryLog[]) => {
      const fresh = logs.filter((log) => {
        const key = `${log.transactionHash}:${log.logIndex}`;
        if (seen.has(key)) return false;
        seen.add(key);
        return true;
      });
      if (active && fresh.length > 0) setJobs((previous) => applyLogs(previous, fresh, firstId));
    };

    // All registry events on one subscription; the fold ignores the ones that are not about jobs. If the
    // socket subscription fails, follow the events by polling instead (the client falls back to HTTP).
    const watch = (poll: boolean): (() => void) =>
      client.watchContractEvent({
        address: registry,
        abi: verificationRegistryAbi,
        strict: true,
        // Without `poll`, viem subscribes when the client's first transport is a socket, else polls.
        ...(poll ? { poll: true } : {}),
        onLogs: apply,
        onError: (cause) => {
          if (!active) return;
          if (poll) return setError(describeError(cause));
          unwatch();
          setPushed(false);
          unwatch = watch(true);
        },
      });
    setPushed(pushes);
    let unwatch = watch(!pushes);

    (async () => {
      const nextJobId = await client.readContract({ address: registry, abi: verificationRegistryAbi, functionName: "nextJobId" });
      // Job ids start at 1; the window is the last JOB_WINDOW of them.
      firstId = nextJobId > BigInt(JOB_WINDOW) ? nextJobId - BigInt(JOB_WINDOW) : 1n;
      const jobId = Array.from({ length: Number(nextJobId - firstId) }, (_, index) => firstId + BigInt(index));
      if (jobId.length > 0) {
        // Filtered by the indexed job id, so the scan from the deployment block returns only the window's logs.
        const filter = { address: registry, abi: verificationRegistryAbi, args: { jobId }, fromBlock, strict: true } as const;
        const batches = await Promise.all([
          client.getContractEvents({ ...filter, eventName: "VerificationRequested" }),
          client.getContractEvents({ ...filter, eventName: "VoteSubmitted" }),
          client.getContractEvents({ ...filter, eventName: "VerificationFulfilled" }),
          client.getContractEvents({ ...filter, eventName: "JobExpired" }),
        ]);
        apply(batches.flat());
      }
      if (active) setLoaded(true);
    })().catch((cause: unknown) => active && setError(describeError(cause)));

    // Unsubscribe on unmount. The socket itself stays open: viem shares it by URL with wagmi's transport.
    return () => {
      active = false;
      unwatch();
    };
  }, [client, pushes, registry, fromBlock]);

  return { jobs, loaded, error, pushed };
}

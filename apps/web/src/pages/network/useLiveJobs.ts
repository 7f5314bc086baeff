import { useEffect, useState } from "react";
import type { Address, PublicClient } from "viem";

import { verificationRegistryAbi } from "../../generated/abis";
import { describeError } from "../../lib/errors";
import { foldJobLogs, JOB_WINDOW, unseenLogs, type JobRow, type RegistryLog } from "./job-logs";

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
      const fresh = unseenLogs(seen, logs);
      if (active && fresh.length > 0) setJobs((previous) => foldJobLogs(previous, fresh, firstId));
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

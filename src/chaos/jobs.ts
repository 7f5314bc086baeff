import { Wallet, type Provider } from "ethers";

import { VerificationRegistry__factory } from "../../typechain-types/index.ts";
import { JobStatus } from "@avn/protocol/constants";

export interface JobTally {
  finalized: number;
  expired: number;
  /** Neither finalized nor expired once the wait was over: what must never happen. */
  lost: number;
}

/**
 * On-chain verification jobs opened by the stack's consumer during a scenario, and what became of them.
 * Each request is a default ethers transaction (no gas override).
 */
export class JobTracker {
  readonly #registry: ReturnType<typeof VerificationRegistry__factory.connect>;
  #open: bigint[] = [];
  #failedRequests = 0;

  constructor(registry: string, consumerKey: string, l2: Provider) {
    // A plain wallet, which asks the chain for its nonce each time: requests are sent one after the other, and
    // one that fails to reach the L2 must not leave a nonce counted that no transaction took (NonceManager would).
    this.#registry = VerificationRegistry__factory.connect(registry, new Wallet(consumerKey, l2));
  }

  /** Opens a job for `owner`'s balance of `asset` on Ethereum; a request that fails is counted, not thrown. */
  async request(owner: string, asset: string): Promise<void> {
    try {
      const receipt = await (await this.#registry.requestEvmBalance(owner, asset)).wait();
      for (const log of receipt?.logs ?? []) {
        const parsed = this.#registry.interface.parseLog(log);
        if (parsed?.name === "VerificationRequested") this.#open.push(parsed.args.jobId as bigint);
      }
    } catch {
      this.#failedRequests += 1;
    }
  }

  /** Requests that failed (the L2 unreachable, say): not jobs, so neither finalized nor lost. */
  get failedRequests(): number {
    return this.#failedRequests;
  }

  /**
   * Waits until every job opened since the last call is finalized or expired, or `timeoutMs` passed, and
   * tallies them. A job past its on-chain deadline counts as expired (its requester can take the refund).
   */
  async settle(timeoutMs: number): Promise<JobTally> {
    const jobs = this.#open.splice(0);
    const tally: JobTally = { finalized: 0, expired: 0, lost: 0 };
    const deadline = Date.now() + timeoutMs;
    let pending = jobs;
    for (;;) {
      const states = await Promise.all(pending.map((jobId) => this.#state(jobId)));
      pending = pending.filter((_, index) => states[index] === "open");
      if (pending.length === 0 || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    for (const jobId of jobs) {
      const state = pending.includes(jobId) ? "open" : await this.#state(jobId);
      if (state === "finalized") tally.finalized += 1;
      else if (state === "expired") tally.expired += 1;
      else tally.lost += 1;
    }
    return tally;
  }

  async #state(jobId: bigint): Promise<"open" | "finalized" | "expired"> {
    const job = await this.#registry.getJob(jobId);
    if (job.status === JobStatus.finalized) return "finalized";
    if (job.status !== JobStatus.open) return "expired";
    const head = await this.#registry.runner!.provider!.getBlock("latest");
    return job.deadline <= BigInt(head!.timestamp) ? "expired" : "open";
  }
}

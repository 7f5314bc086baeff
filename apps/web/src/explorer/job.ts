import type { Address, Hash, Hex } from "viem";

/** A registry event of one job, decoded, with where it was logged. */
export interface JobEvent {
  eventName: string;
  args: Record<string, unknown>;
  transactionHash: Hash;
  blockNumber: bigint;
  logIndex: number;
}

export interface JobVote {
  licenseId: bigint;
  operator: Address;
  resultHash: Hex;
  sourceBlock: bigint;
  transactionHash: Hash;
  /** Voted for the answer that reached quorum (undefined while the job is open). */
  agreed?: boolean;
  /** The staked tokens the license was credited at finalization (agreeing votes only). */
  feeShare?: bigint;
}

export interface JobStory {
  id: bigint;
  request?: { requester: Address; chain: number; owner: Hex; asset: Hex; fee: bigint; transactionHash: Hash; blockNumber: bigint };
  votes: JobVote[];
  ignored: Array<{ operator: Address; reason: number; transactionHash: Hash }>;
  result?: { balance: bigint; queryResultHash: Hex; sourceBlock: bigint; transactionHash: Hash; blockNumber: bigint };
  expired?: { refundedFee: bigint; transactionHash: Hash };
  /** The consumer's callback reverted or ran out of gas (finalization stands). */
  callbackFailed: boolean;
}

/** Why the registry skipped a submission (`IVerificationRegistry.IgnoreReason`). */
export const IGNORE_REASONS = [
  "the job was already finalized",
  "the job had expired",
  "its deadline had passed",
  "the job had no room for more votes",
  "a license was not live or not delegated to the sender",
  "a license had already voted",
] as const;

const byPosition = (a: JobEvent, b: JobEvent) =>
  a.blockNumber === b.blockNumber ? a.logIndex - b.logIndex : a.blockNumber < b.blockNumber ? -1 : 1;

/**
 * A job's life from its registry events: the request, each accepted vote, the skipped submissions, the
 * result or expiry, a failed callback. The fee split is the registry's (`_settleVotes`): the votes
 * agreeing with the answer that reached quorum (the finalizing transaction's vote) share the fee equally,
 * the first of them in vote order also taking the division's remainder; disagreeing votes get nothing.
 */
export function jobStory(id: bigint, events: readonly JobEvent[]): JobStory {
  const story: JobStory = { id, votes: [], ignored: [], callbackFailed: false };
  for (const event of [...events].sort(byPosition)) {
    const args = event.args;
    switch (event.eventName) {
      case "VerificationRequested":
        story.request = {
          requester: args.requester as Address,
          chain: Number(args.chain),
          owner: args.owner as Hex,
          asset: args.asset as Hex,
          fee: args.fee as bigint,
          transactionHash: event.transactionHash,
          blockNumber: event.blockNumber,
        };
        break;
      case "VoteSubmitted":
        story.votes.push({
          licenseId: args.licenseId as bigint,
          operator: args.operator as Address,
          resultHash: args.resultHash as Hex,
          sourceBlock: args.sourceBlock as bigint,
          transactionHash: event.transactionHash,
        });
        break;
      case "SubmissionIgnored":
        story.ignored.push({ operator: args.operator as Address, reason: Number(args.reason), transactionHash: event.transactionHash });
        break;
      case "VerificationFulfilled":
        story.result = {
          balance: args.balance as bigint,
          queryResultHash: args.queryResultHash as Hex,
          sourceBlock: args.sourceBlock as bigint,
          transactionHash: event.transactionHash,
          blockNumber: event.blockNumber,
        };
        break;
      case "JobExpired":
        story.expired = { refundedFee: args.refundedFee as bigint, transactionHash: event.transactionHash };
        break;
      case "CallbackFailed":
        story.callbackFailed = true;
        break;
    }
  }
  if (story.result !== undefined) {
    // The vote that reached quorum is the last one accepted, in the finalizing transaction.
    const winning = story.votes.at(-1)?.resultHash;
    const agreeing = story.votes.filter((vote) => vote.resultHash === winning);
    const fee = story.request?.fee;
    let remainder = fee === undefined || agreeing.length === 0 ? 0n : fee - (fee / BigInt(agreeing.length)) * BigInt(agreeing.length);
    for (const vote of story.votes) {
      vote.agreed = vote.resultHash === winning;
      if (vote.agreed && fee !== undefined) {
        vote.feeShare = fee / BigInt(agreeing.length) + remainder;
        remainder = 0n;
      }
    }
  }
  return story;
}

import type { Address, Hex } from "viem";

import { formatDuration, formatTime } from "../../lib/format";
import { tooLateForL2 as tooLate, voteStillOpen as stillOpen } from "@avn/protocol/governance/rules";
import { type L2Call } from "@avn/protocol/governance/proposal";
import { formatVotes, type ProposalStateName } from "@avn/protocol/governance/rules";

/** One proposal as the governor reports it, all read at one L1 block. */
export interface ProposalStatus {
  id: bigint;
  state: ProposalStateName;
  proposer: Address;
  /** The proposal's actions, as stored by the governor (`proposalDetails`). */
  targets: readonly Address[];
  values: readonly bigint[];
  calldatas: readonly Hex[];
  descriptionHash: Hex;
  /** The L2 batch its one action carries (undefined for a proposal of another shape). */
  batch: { calls: L2Call[]; deadline: bigint; executor: Address } | undefined;
  votes: { for: bigint; against: bigint; abstain: bigint };
  /** Votes for and abstaining needed to pass; undefined until the snapshot block is in the past (the supply then is not known yet). */
  quorum: bigint | undefined;
  snapshotBlock: bigint;
  deadlineBlock: bigint;
  /** When the timelock releases a queued proposal (L1 seconds). */
  eta: bigint | undefined;
  /** The L1 block all of this was read at, and its time. */
  block: bigint;
  time: bigint;
}

/** What the L2 side of an executed proposal did (the CLI's `L2Outcome`). */
export type L2Outcome =
  /** No message to the executor was found in the timelock's execution (a proposal of another shape). */
  | { kind: "no message" }
  /** "expired": not run, and the L2 clock is past the batch's deadline, so it never will be. */
  | { kind: "awaiting relay" | "executed" | "failed" | "expired"; messageHash: Hex };

/** Whether a vote sent now would still count (the rule the CLI applies: `voteStillOpen`). */
export function voteStillOpen(status: ProposalStatus): boolean {
  return stillOpen(status.state, status.deadlineBlock, status.block);
}

/** Why executing a queued proposal now would be wasted: its L2 batch could not run by its deadline (the CLI's `tooLateForL2`). */
export function tooLateForL2(status: ProposalStatus): string | undefined {
  if (status.batch === undefined || !tooLate(status.time, status.batch.deadline)) return undefined;
  return `Its L2 batch must run by ${formatTime(status.batch.deadline)}, too soon for the bridge to carry it: it can no longer take effect on L2 (propose it again).`;
}

/** `count` L1 blocks and the time they take. */
export function blocksAndTime(count: bigint, blockSeconds: number): string {
  const blocks = count < 0n ? 0n : count;
  return `${blocks} block${blocks === 1n ? "" : "s"} (~${formatDuration(Number(blocks) * blockSeconds)})`;
}

/** Why a finished vote failed, as `Governor` decides it (quorum counts for and abstain; for must beat against). */
export function defeatReason(status: ProposalStatus): string {
  const { votes, quorum } = status;
  if (quorum !== undefined && votes.for + votes.abstain < quorum) return `the quorum of ${formatVotes(quorum)} votes was not reached`;
  return "no more votes for than against";
}

/**
 * What happens next, in words, with the blocks or time left: the CLI's `Governance.#nextStep` (the same
 * rules, the tally shown apart on the page). Times are the L1 chain's (its latest block), as the timelock
 * counts them, never this computer's clock.
 */
export function nextStep(status: ProposalStatus, blockSeconds: number, l2: L2Outcome | undefined): string {
  switch (status.state) {
    case "Pending":
      return `Voting starts after block ${status.snapshotBlock}, in ${blocksAndTime(status.snapshotBlock - status.block + 1n, blockSeconds)}.`;
    case "Active":
      return voteStillOpen(status)
        ? `Voting is open until block ${status.deadlineBlock}: ${blocksAndTime(status.deadlineBlock - status.block, blockSeconds)} left.`
        : `Voting closes with block ${status.deadlineBlock}, the latest: a vote sent now would come too late.`;
    case "Canceled":
      return "The proposal was canceled.";
    case "Defeated":
      return `The proposal was defeated: ${defeatReason(status)}.`;
    case "Succeeded":
      return "The proposal passed: queue it in the timelock.";
    case "Queued": {
      const eta = status.eta ?? 0n;
      const late = tooLateForL2(status);
      if (late !== undefined) return `Queued, but too late: ${late.charAt(0).toLowerCase()}${late.slice(1)}`;
      return eta > status.time
        ? `Queued: executable in ${formatDuration(eta - status.time)} (at ${formatTime(eta)}, L1 time).`
        : "Queued and released by the timelock: execute it.";
    }
    case "Expired":
      return "The proposal expired in the timelock without being executed.";
    case "Executed":
      if (l2 === undefined) return "Executed on L1; checking L2…";
      switch (l2.kind) {
        case "no message":
          return "Executed on L1.";
        case "executed":
          return "Executed on L1 and on L2.";
        case "awaiting relay":
          return "Executed on L1; its message awaits relay to L2.";
        case "failed":
          return `Executed on L1; its L2 batch failed and can be replayed on L2${status.batch === undefined ? "" : ` until ${formatTime(status.batch.deadline)} (L2 time)`}.`;
        case "expired":
          return "Executed on L1; its L2 batch did not run before its deadline and never will.";
      }
  }
}

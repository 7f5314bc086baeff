// The rules of a governance proposal that the CLI (`npm run gov`) and the web app's Governance page share:
// how a proposal is written (its description and its L2 deadline), how the timelock names it, what its
// states and vote choices are, and how votes read. viem only, so the browser bundle imports it as it is.
import { formatUnits, getAddress, type Address, type Hex } from "viem";

import { PROPOSAL_STATES, SUPPORT } from "../constants.ts";
import { describeChange, l1ProposalFor, l2CallsOf, type GovernedContracts, type L1Proposal, type ProtocolChange } from "./proposal.ts";

export type ProposalStateName = (typeof PROPOSAL_STATES)[number];

export type VoteChoice = keyof typeof SUPPORT;

/** How long after the timelock releases a proposal its L2 batch may still run: time for anyone to execute it and for the bridge to relay it. */
export const L2_DEADLINE_SLACK_SECONDS = 3n * 86_400n;

/** What an execution leaves the bridge before a batch's deadline, at least: a relay takes minutes on a live chain. */
export const RELAY_MARGIN_SECONDS = 600n;

/** The governor's and the timelock's delays, and the time the L2 deadline is counted from. */
export interface ProposalTiming {
  votingDelay: bigint;
  votingPeriod: bigint;
  timelockDelay: bigint;
  /** The later of the L1's and the L2's latest block times: the executor checks the deadline by the L2's clock. */
  now: bigint;
}

/**
 * The description of a proposal of `changes`: the note (or "L2 protocol change"), a line per change, and
 * OpenZeppelin's `#proposer=` suffix, so that nobody else can make the same proposal first (the same
 * actions and description give the same id) and then cancel it.
 */
export function proposalDescription(changes: readonly ProtocolChange[], note: string | undefined, proposer: Address): string {
  const summary = changes.map((change) => `- ${describeChange(change)}`).join("\n");
  const title = note === undefined || note.trim() === "" ? "L2 protocol change" : note.trim();
  return `${title}\n\n${summary}\n\n#proposer=${getAddress(proposer)}`;
}

/** The latest L2 time a batch proposed now may run at: the whole vote and the timelock, then the slack. */
export function l2DeadlineFor(timing: ProposalTiming, l1BlockSeconds: number): bigint {
  const governanceSeconds = (timing.votingDelay + timing.votingPeriod) * BigInt(Math.ceil(l1BlockSeconds)) + timing.timelockDelay;
  return timing.now + governanceSeconds + L2_DEADLINE_SLACK_SECONDS;
}

/** The Governor proposal that makes `changes` on L2. */
export function buildProposal(input: {
  changes: readonly ProtocolChange[];
  note?: string;
  proposer: Address;
  timing: ProposalTiming;
  l1BlockSeconds: number;
  l1Messenger: Address;
  executor: Address;
  l2: GovernedContracts;
  l2GasLimit?: number;
}): L1Proposal {
  return l1ProposalFor({
    l1Messenger: input.l1Messenger,
    executor: input.executor,
    calls: input.changes.flatMap((change) => l2CallsOf(change, input.l2)),
    deadline: l2DeadlineFor(input.timing, input.l1BlockSeconds),
    description: proposalDescription(input.changes, input.note, input.proposer),
    l2GasLimit: input.l2GasLimit,
  });
}

/** GovernorTimelockControl's salt for a proposal's timelock operation: the governor's address (as bytes20) XOR the description hash. */
export function timelockSalt(governor: Address, descriptionHash: Hex): Hex {
  const mask = BigInt(governor) << 96n;
  return `0x${(mask ^ BigInt(descriptionHash)).toString(16).padStart(64, "0")}`;
}

/** Whether a vote sent now would still count: it lands in a later block, and the vote ends with `deadlineBlock`. */
export function voteStillOpen(state: ProposalStateName, deadlineBlock: bigint, latestBlock: bigint): boolean {
  return state === "Active" && deadlineBlock > latestBlock;
}

/** Whether executing now leaves the bridge too little time to carry the batch before its deadline. */
export function tooLateForL2(now: bigint, l2Deadline: bigint | undefined): boolean {
  return l2Deadline !== undefined && now + RELAY_MARGIN_SECONDS > l2Deadline;
}

/** Votes as people count them: one per whole token (18 decimals), grouped by thousands, every decimal kept. */
export function formatVotes(votes: bigint): string {
  const [whole, fraction = ""] = formatUnits(votes, 18).split(".");
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  const trimmed = fraction.replace(/0+$/, "");
  return trimmed === "" ? grouped : `${grouped}.${trimmed}`;
}

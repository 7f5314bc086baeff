import { getAddress, Interface, type Provider, type TransactionReceipt } from "ethers";
import type { Address, Hex } from "viem";

import type { ProtocolGovernor, ProtocolTimelock } from "../../typechain-types/index.ts";
import { formatBlocks, formatDuration, formatVotes } from "./format.ts";
import {
  crossDomainMessageHash,
  inspectProposal,
  L1_MESSENGER_ABI,
  L2_MESSENGER_ABI,
  type GovernedContracts,
  type SentMessage,
} from "@avn/protocol/governance/proposal";
import { PROPOSAL_STATES } from "@avn/protocol/constants";
import { timelockSalt, tooLateForL2, voteStillOpen, type ProposalStateName } from "@avn/protocol/governance/rules";

export { PROPOSAL_STATES } from "@avn/protocol/constants";
export { type ProposalStateName } from "@avn/protocol/governance/rules";

/** Where governance lives on both chains. */
export interface GovernanceAddresses {
  governor: string;
  timelock: string;
  /** The primary token on L1 (the votes). */
  token: string;
  l1Messenger: string;
  executor: string;
  l2Messenger: string;
  /** The L2 contracts governance administers. */
  l2: GovernedContracts;
}

/** What the L2 side of an executed proposal did. */
export type L2Outcome = "awaiting relay" | "executed" | "failed (replayable until its deadline)" | "expired (can never run)";

export interface ProposalStatus {
  id: bigint;
  state: ProposalStateName;
  proposer: string;
  description: string | undefined;
  /** Every action in words (an L2 batch's calls, or the L1 action itself). */
  changes: string[];
  /** What differs from a plain L2 batch through the configured messenger and executor. */
  warnings: string[];
  votes: { for: bigint; against: bigint; abstain: bigint };
  /** Votes for and abstaining needed to pass (a fraction of the supply at the snapshot). */
  quorum: bigint;
  snapshotBlock: bigint;
  deadlineBlock: bigint;
  /** Latest L1 block and its time. */
  block: bigint;
  time: bigint;
  /** When the timelock releases a queued proposal (L1 seconds). */
  eta: bigint | undefined;
  /** The latest L2 time the batch may run at. */
  l2Deadline: bigint | undefined;
  /** The sum of the actions' ETH, which the timelock must hold to execute them. */
  value: bigint;
  l2: { outcome: L2Outcome; messageHash: string } | undefined;
  /** What happens next, in words. */
  next: string;
}

export interface StatusContext {
  governor: ProtocolGovernor;
  timelock: ProtocolTimelock;
  l1: Provider;
  l2: Provider;
  addresses: GovernanceAddresses;
  l1BlockSeconds: number;
}

const L1_MESSENGER = new Interface(L1_MESSENGER_ABI);
const L2_MESSENGER = new Interface(L2_MESSENGER_ABI);

/** Reads proposal `id` (undefined for an id the governor never saw). */
export async function readStatus(context: StatusContext, id: bigint): Promise<ProposalStatus | undefined> {
  const { governor, addresses } = context;
  const snapshotBlock = await governor.proposalSnapshot(id);
  if (snapshotBlock === 0n) return undefined;
  const [stateIndex, proposer, deadlineBlock, votes, details, latest, quorum, eta, votingDelay] = await Promise.all([
    governor.state(id),
    governor.proposalProposer(id),
    governor.proposalDeadline(id),
    governor.proposalVotes(id),
    governor.proposalDetails(id),
    context.l1.getBlock("latest"),
    governor.quorum(snapshotBlock).catch(() => 0n), // a snapshot in the future has no supply yet
    governor.proposalEta(id),
    governor.votingDelay(),
  ]);
  if (latest === null) throw new Error("the L1 has no latest block");
  const state = PROPOSAL_STATES[Number(stateIndex)];
  // Plain arrays: ethers' results are frozen, and passing one to another call fails.
  const [targets, values, calldatas] = [[...details[0]], [...details[1]], [...details[2]]];
  const inspection = inspectProposal(
    { targets: targets as Address[], values, calldatas: calldatas as Hex[] },
    {
      l1Messenger: addresses.l1Messenger as Address,
      executor: addresses.executor as Address,
      governor: addresses.governor as Address,
      timelock: addresses.timelock as Address,
      l2: addresses.l2,
    },
  );
  const status: ProposalStatus = {
    id,
    state,
    proposer,
    description: await descriptionOf(context, id, snapshotBlock - votingDelay),
    changes: inspection.changes,
    warnings: inspection.warnings,
    votes: { against: votes[0], for: votes[1], abstain: votes[2] },
    quorum,
    snapshotBlock,
    deadlineBlock,
    block: BigInt(latest.number),
    time: BigInt(latest.timestamp),
    eta: eta === 0n ? undefined : eta,
    l2Deadline: inspection.l2Deadline,
    value: values.reduce((sum, value) => sum + value, 0n),
    l2:
      state === "Executed"
        ? await l2OutcomeOf(
            context,
            { targets, values, calldatas, descriptionHash: details[3], executedAfter: deadlineBlock },
            inspection.l2Deadline,
          )
        : undefined,
    next: "",
  };
  status.next = nextStep(status, context.l1BlockSeconds);
  return status;
}

/** What happens next to a proposal, with the blocks or the time left. */
export function nextStep(status: ProposalStatus, blockSeconds: number): string {
  const tally = `for ${formatVotes(status.votes.for)}, against ${formatVotes(status.votes.against)}, abstain ${formatVotes(status.votes.abstain)}; quorum ${formatVotes(status.quorum)}`;
  switch (status.state) {
    case "Pending":
      return `voting starts after block ${status.snapshotBlock}, in ${formatBlocks(status.snapshotBlock - status.block + 1n, blockSeconds)}`;
    case "Active":
      // A transaction sent now lands in a later block: with none left, the vote is over for it.
      return voteStillOpen(status.state, status.deadlineBlock, status.block)
        ? `voting is open until block ${status.deadlineBlock}: ${formatBlocks(status.deadlineBlock - status.block, blockSeconds)} left (${tally})`
        : `voting closes with block ${status.deadlineBlock}, the latest: too late for another vote (${tally})`;
    case "Canceled":
      return "the proposal was canceled";
    case "Defeated":
      return `the proposal was defeated (${tally})`;
    case "Succeeded":
      return `the proposal passed (${tally}): queue it in the timelock`;
    case "Queued": {
      const eta = status.eta ?? 0n;
      if (tooLateForL2(status.time, status.l2Deadline))
        return "queued, but too late: its L2 batch could no longer reach L2 before its deadline (propose it again)";
      return eta > status.time
        ? `queued: the timelock releases it in ${formatDuration(Number(eta - status.time))} (at ${new Date(Number(eta) * 1000).toISOString()})`
        : "queued and ready: execute it";
    }
    case "Expired":
      return "the proposal expired without being executed";
    case "Executed":
      switch (status.l2?.outcome) {
        case undefined:
          return "executed on L1";
        case "executed":
          return "executed on L1 and on L2";
        case "awaiting relay":
          return "executed on L1; its message awaits relay to L2";
        case "expired (can never run)":
          return "executed on L1; its L2 batch was not run before its deadline and never will be";
        default:
          return "executed on L1; its L2 batch failed and can be replayed on L2 before its deadline";
      }
  }
}

/** The description of proposal `id`, from its `ProposalCreated` event in the block it was made (not fatal). */
async function descriptionOf(context: StatusContext, id: bigint, createdAround: bigint): Promise<string | undefined> {
  try {
    // The voting delay may have changed since: a few blocks around the expected one.
    const logs = await context.l1.getLogs({
      address: context.addresses.governor,
      topics: [context.governor.interface.getEvent("ProposalCreated").topicHash],
      fromBlock: Math.max(0, Number(createdAround) - 3),
      toBlock: Number(createdAround) + 3,
    });
    for (const log of logs) {
      const event = context.governor.interface.parseLog(log);
      if (event?.args.proposalId === id) return event.args.description as string;
    }
  } catch {
    // A log search refused (some RPCs cap ranges): the rest of the status stands without it.
  }
  return undefined;
}

/** Whether the L2 messenger relayed the message an executed proposal sent, found from the timelock's execution. */
async function l2OutcomeOf(
  context: StatusContext,
  proposal: { targets: string[]; values: bigint[]; calldatas: string[]; descriptionHash: string; executedAfter: bigint },
  deadline: bigint | undefined,
): Promise<ProposalStatus["l2"]> {
  const { targets, values, calldatas, descriptionHash } = proposal;
  const operationId = await context.timelock.hashOperationBatch(
    targets,
    values,
    calldatas,
    `0x${"00".repeat(32)}`,
    timelockSalt(context.addresses.governor as Address, descriptionHash as Hex),
  );
  // Executed after its vote ended: the search starts there.
  const [executed] = await context.l1.getLogs({
    address: context.addresses.timelock,
    topics: [context.timelock.interface.getEvent("CallExecuted").topicHash, operationId],
    fromBlock: Number(proposal.executedAfter),
  });
  if (executed === undefined) return undefined;
  const receipt = await context.l1.getTransactionReceipt(executed.transactionHash);
  const sent = receipt === null ? undefined : sentMessageIn(receipt, context.addresses);
  if (sent === undefined) return undefined;
  const messageHash = crossDomainMessageHash(sent);
  const read = async (name: "successfulMessages" | "failedMessages") =>
    L2_MESSENGER.decodeFunctionResult(
      name,
      await context.l2.call({ to: context.addresses.l2Messenger, data: L2_MESSENGER.encodeFunctionData(name, [messageHash]) }),
    )[0] as boolean;
  if (await read("successfulMessages")) return { outcome: "executed", messageHash };
  const l2Time = BigInt((await context.l2.getBlock("latest"))?.timestamp ?? 0);
  if (deadline !== undefined && l2Time > deadline) return { outcome: "expired (can never run)", messageHash };
  if (await read("failedMessages")) return { outcome: "failed (replayable until its deadline)", messageHash };
  return { outcome: "awaiting relay", messageHash };
}

/**
 * The message the L1 messenger sent to the executor in `receipt`, with the value from the
 * `SentMessageExtension1` the messenger emits right after each `SentMessage` (an extension that follows a
 * message to another target is that message's, not the executor's).
 */
export function sentMessageIn(
  receipt: Pick<TransactionReceipt, "logs">,
  addresses: Pick<GovernanceAddresses, "l1Messenger" | "executor">,
): SentMessage | undefined {
  const messenger = addresses.l1Messenger.toLowerCase();
  let sent: Omit<SentMessage, "value"> | undefined;
  let value = 0n;
  // Whether the messenger's latest SentMessage was the one to the executor.
  let latestIsExecutors = false;
  for (const log of receipt.logs) {
    if (log.address.toLowerCase() !== messenger) continue;
    const event = L1_MESSENGER.parseLog(log);
    if (event?.name === "SentMessage") {
      // ethers types decoded event arguments loosely; these are SentMessage's, in its ABI's types.
      const args = event.args as unknown as { target: Address; sender: Address; message: Hex; messageNonce: bigint; gasLimit: bigint };
      latestIsExecutors = getAddress(args.target) === getAddress(addresses.executor);
      if (!latestIsExecutors) continue;
      sent = { target: args.target, sender: args.sender, message: args.message, nonce: args.messageNonce, gasLimit: args.gasLimit };
      value = 0n;
    } else if (event?.name === "SentMessageExtension1" && latestIsExecutors) {
      value = event.args.value as bigint;
    }
  }
  return sent === undefined ? undefined : { ...sent, value };
}

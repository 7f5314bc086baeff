import { formatUnits, getAddress, Interface, solidityPacked, type ContractRunner, type Provider, type Signer, type TransactionReceipt } from "ethers";
import type { Address, Hex } from "viem";

import { contractAt } from "../common/artifacts.ts";
import type { PrimaryToken, ProtocolGovernor, ProtocolTimelock } from "../../typechain-types/index.ts";
import {
  crossDomainMessageHash,
  describeL2Call,
  L1_MESSENGER_ABI,
  L2_MESSENGER_ABI,
  l1ProposalFor,
  l2CallsOf,
  l2CallsOfProposal,
  describeChange,
  type GovernedContracts,
  type ProtocolChange,
  type SentMessage,
} from "./proposal.ts";

/** OpenZeppelin's `IGovernor.ProposalState`, by index. */
export const PROPOSAL_STATES = ["Pending", "Active", "Canceled", "Defeated", "Succeeded", "Queued", "Expired", "Executed"] as const;
export type ProposalStateName = (typeof PROPOSAL_STATES)[number];
export type VoteChoice = "against" | "for" | "abstain";
const SUPPORT: Record<VoteChoice, number> = { against: 0, for: 1, abstain: 2 };

export type GovernanceErrorCode =
  | "TOO_EARLY"
  | "WRONG_STATE"
  | "NO_VOTES"
  | "BELOW_THRESHOLD"
  | "ALREADY_VOTED"
  | "UNKNOWN_PROPOSAL"
  | "NO_SIGNER"
  | "CONFIGURATION"
  | "INVALID_INPUT";

/** A step that cannot be taken now, said plainly (with the time left where waiting is the answer). */
export class GovernanceError extends Error {
  readonly code: GovernanceErrorCode;

  constructor(code: GovernanceErrorCode, message: string) {
    super(message);
    this.name = "GovernanceError";
    this.code = code;
  }
}

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

export interface GovernanceOptions {
  /** A signer for the steps that send transactions; a provider is enough for `status` and `list`. */
  l1: ContractRunner;
  l2: Provider;
  addresses: GovernanceAddresses;
  /** The L1's seconds per block, to turn blocks left into time (12 live, 2 on the devnet). */
  l1BlockSeconds: number;
  /** The first L1 block to search for governance events (the deployment's); 0 on the devnet. */
  fromBlock?: number;
}

/** What the L2 side of an executed proposal did. */
export type L2Outcome = "awaiting relay" | "executed" | "failed (replayable until its deadline)";

export interface ProposalStatus {
  id: bigint;
  state: ProposalStateName;
  proposer: string;
  description: string | undefined;
  /** The proposal's L2 calls in words (empty for a proposal of another shape). */
  changes: string[];
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
  l2: { outcome: L2Outcome; messageHash: string } | undefined;
  /** What happens next, in words. */
  next: string;
}

const L1_MESSENGER = new Interface(L1_MESSENGER_ABI as unknown as string[]);

/**
 * The protocol's governance as the CLI, the devnet setup and the tests use it: delegate, propose L2
 * changes, vote, queue, execute and follow a proposal to its effect on L2. Every step checks first that it
 * can be taken now and says why not (with the blocks or seconds left) rather than sending a transaction
 * that would revert.
 */
export class Governance {
  readonly #options: GovernanceOptions;
  readonly #governor: ProtocolGovernor;
  readonly #timelock: ProtocolTimelock;
  readonly #token: PrimaryToken;

  constructor(options: GovernanceOptions) {
    this.#options = options;
    this.#governor = contractAt<ProtocolGovernor>("ProtocolGovernor", options.addresses.governor, options.l1, "governance");
    this.#timelock = contractAt<ProtocolTimelock>("ProtocolTimelock", options.addresses.timelock, options.l1, "governance");
    this.#token = contractAt<PrimaryToken>("PrimaryToken", options.addresses.token, options.l1);
  }

  get addresses(): GovernanceAddresses {
    return this.#options.addresses;
  }

  /** Delegates the signer's votes to `to` (itself by default): tokens vote only once delegated. */
  async delegate(to?: string): Promise<{ delegatee: string; votes: bigint }> {
    const signer = this.#signer();
    const delegatee = getAddress(to ?? (await signer.getAddress()));
    await (await this.#token.delegate(delegatee)).wait();
    return { delegatee, votes: await this.#token.getVotes(delegatee) };
  }

  /** The votes `account` holds now and its token balance. */
  async votingPower(account: string): Promise<{ votes: bigint; balance: bigint; delegatee: string }> {
    const [votes, balance, delegatee] = await Promise.all([this.#token.getVotes(account), this.#token.balanceOf(account), this.#token.delegates(account)]);
    return { votes, balance, delegatee };
  }

  /**
   * Proposes `changes` as one L2 batch. The batch may run on L2 until the whole vote, the timelock and a
   * week more have passed (its `deadline`: a relay that failed can be replayed by anyone until then).
   */
  async propose(changes: readonly ProtocolChange[], note?: string): Promise<bigint> {
    if (changes.length === 0) throw new GovernanceError("WRONG_STATE", "Name at least one change to propose");
    const signer = this.#signer();
    const proposer = await signer.getAddress();
    // The governor counts the votes of the block before the proposal's: those of the latest block now.
    const [threshold, votes] = await Promise.all([this.#governor.proposalThreshold(), this.#token.getVotes(proposer)]);
    if (votes < threshold) {
      throw new GovernanceError("BELOW_THRESHOLD", `Proposing needs ${formatVotes(threshold)} votes; ${proposer} has ${formatVotes(votes)} (tokens vote once delegated: npm run gov -- delegate)`);
    }
    const proposal = await this.#proposal(changes, note);
    const receipt = await (await this.#governor.propose(proposal.targets, proposal.values, proposal.calldatas, proposal.description)).wait();
    const created = receipt?.logs.map((log) => this.#parseGovernorLog(log)).find((event) => event?.name === "ProposalCreated");
    if (created === undefined || created === null) throw new Error("the proposal transaction emitted no ProposalCreated event");
    return created.args.proposalId as bigint;
  }

  /** Casts the signer's votes on proposal `id`. */
  async vote(id: bigint, choice: VoteChoice, reason = ""): Promise<bigint> {
    const signer = this.#signer();
    const voter = await signer.getAddress();
    const status = await this.status(id);
    if (status.state !== "Active") throw new GovernanceError(status.state === "Pending" ? "TOO_EARLY" : "WRONG_STATE", `Cannot vote: ${status.next}`);
    if (await this.#governor.hasVoted(id, voter)) throw new GovernanceError("ALREADY_VOTED", `${voter} has already voted on proposal ${id}`);
    const weight = await this.#governor.getVotes(voter, status.snapshotBlock);
    if (weight === 0n) {
      throw new GovernanceError("NO_VOTES", `${voter} had no votes at the proposal's snapshot (block ${status.snapshotBlock}): votes count only if delegated before it`);
    }
    await (await this.#governor.castVoteWithReason(id, SUPPORT[choice], reason)).wait();
    return weight;
  }

  /** Queues a proposal that passed into the timelock. */
  async queue(id: bigint): Promise<bigint> {
    this.#signer();
    const status = await this.status(id);
    if (status.state !== "Succeeded") throw new GovernanceError(stillAhead(status.state) ? "TOO_EARLY" : "WRONG_STATE", `Cannot queue: ${status.next}`);
    await (await this.#governor["queue(uint256)"](id)).wait();
    return this.#governor.proposalEta(id);
  }

  /** Executes a queued proposal whose timelock delay has passed; returns the L2 message it sent. */
  async execute(id: bigint): Promise<{ messageHash: string | undefined }> {
    this.#signer();
    const status = await this.status(id);
    if (status.state !== "Queued" || status.eta === undefined || status.eta > status.time) {
      throw new GovernanceError(stillAhead(status.state) ? "TOO_EARLY" : "WRONG_STATE", `Cannot execute: ${status.next}`);
    }
    const receipt = await (await this.#governor["execute(uint256)"](id)).wait();
    const sent = receipt === null ? undefined : this.#sentMessage(receipt);
    return { messageHash: sent === undefined ? undefined : crossDomainMessageHash(sent) };
  }

  /** Everything about proposal `id` (throws UNKNOWN_PROPOSAL for an id the governor never saw). */
  async status(id: bigint): Promise<ProposalStatus> {
    const governor = this.#governor;
    const snapshotBlock = await governor.proposalSnapshot(id);
    if (snapshotBlock === 0n) throw new GovernanceError("UNKNOWN_PROPOSAL", `No proposal ${id} on this governor`);
    const provider = this.#l1Provider();
    const [stateIndex, proposer, deadlineBlock, votes, details, latest, quorum, eta] = await Promise.all([
      governor.state(id),
      governor.proposalProposer(id),
      governor.proposalDeadline(id),
      governor.proposalVotes(id),
      governor.proposalDetails(id),
      provider.getBlock("latest"),
      governor.quorum(snapshotBlock).catch(() => 0n), // a snapshot in the future has no supply yet
      governor.proposalEta(id),
    ]);
    if (latest === null) throw new Error("the L1 has no latest block");
    const state = PROPOSAL_STATES[Number(stateIndex)];
    // Plain arrays: ethers' results are frozen, and passing one to another call fails.
    const [targets, values, calldatas] = [[...details[0]], [...details[1]], [...details[2]]];
    const descriptionHash = details[3];
    const batch = l2CallsOfProposal(calldatas as Hex[]);
    const l2 = state === "Executed" ? await this.#l2Outcome(targets, values, calldatas, descriptionHash) : undefined;
    const status: ProposalStatus = {
      id,
      state,
      proposer,
      description: await this.#description(id, snapshotBlock),
      changes: batch?.calls.map((call) => describeL2Call(call, this.#options.addresses.l2)) ?? [],
      votes: { against: votes[0], for: votes[1], abstain: votes[2] },
      quorum,
      snapshotBlock,
      deadlineBlock,
      block: BigInt(latest.number),
      time: BigInt(latest.timestamp),
      eta: eta === 0n ? undefined : eta,
      l2Deadline: batch?.deadline,
      l2,
      next: "",
    };
    status.next = this.#nextStep(status);
    return status;
  }

  /** Every proposal the governor stores, oldest first. */
  async list(): Promise<ProposalStatus[]> {
    const count = await this.#governor.proposalCount();
    const ids: bigint[] = [];
    for (let index = 0n; index < count; index += 1n) ids.push((await this.#governor.proposalDetailsAt(index))[0]);
    return Promise.all(ids.map((id) => this.status(id)));
  }

  /** The proposal arguments `propose` sends for `changes` (exposed for tests and the web app's preview). */
  async proposalFor(changes: readonly ProtocolChange[], note?: string) {
    return this.#proposal(changes, note);
  }

  async #proposal(changes: readonly ProtocolChange[], note?: string) {
    const { addresses, l1BlockSeconds } = this.#options;
    const [votingDelay, votingPeriod, minDelay, latest] = await Promise.all([
      this.#governor.votingDelay(),
      this.#governor.votingPeriod(),
      this.#timelock.getMinDelay(),
      this.#l1Provider().getBlock("latest"),
    ]);
    const governanceSeconds = ((votingDelay + votingPeriod) * BigInt(Math.ceil(l1BlockSeconds))) + minDelay;
    const deadline = BigInt(latest!.timestamp) + governanceSeconds + 7n * 86_400n;
    const calls = changes.flatMap((change) => l2CallsOf(change, addresses.l2));
    const summary = changes.map((change) => `- ${describeChange(change)}`).join("\n");
    const description = note === undefined || note.trim() === "" ? `L2 protocol change\n\n${summary}` : `${note.trim()}\n\n${summary}`;
    return l1ProposalFor({
      l1Messenger: addresses.l1Messenger as Address,
      executor: addresses.executor as Address,
      calls,
      deadline,
      description,
    });
  }

  #nextStep(status: ProposalStatus): string {
    const blocks = (count: bigint) => `${count} block${count === 1n ? "" : "s"} (~${this.#duration(Number(count) * this.#options.l1BlockSeconds)})`;
    const tally = `for ${formatVotes(status.votes.for)}, against ${formatVotes(status.votes.against)}, abstain ${formatVotes(status.votes.abstain)}; quorum ${formatVotes(status.quorum)}`;
    switch (status.state) {
      case "Pending":
        return `voting starts after block ${status.snapshotBlock}, in ${blocks(status.snapshotBlock - status.block + 1n)}`;
      case "Active":
        return `voting is open until block ${status.deadlineBlock}: ${blocks(status.deadlineBlock - status.block)} left (${tally})`;
      case "Canceled":
        return "the proposal was canceled";
      case "Defeated":
        return `the proposal was defeated (${tally})`;
      case "Succeeded":
        return `the proposal passed (${tally}): queue it in the timelock`;
      case "Queued": {
        const eta = status.eta ?? 0n;
        return eta > status.time
          ? `queued: the timelock releases it in ${this.#duration(Number(eta - status.time))} (at ${new Date(Number(eta) * 1000).toISOString()})`
          : "queued and ready: execute it";
      }
      case "Expired":
        return "the proposal expired in the timelock without being executed";
      case "Executed":
        if (status.l2 === undefined) return "executed on L1";
        if (status.l2.outcome === "executed") return "executed on L1 and on L2";
        if (status.l2.outcome === "awaiting relay") return "executed on L1; its message awaits relay to L2";
        return "executed on L1; its L2 call failed and can be replayed on L2 before its deadline";
    }
  }

  #duration(seconds: number): string {
    if (seconds < 120) return `${Math.max(0, Math.round(seconds))} s`;
    if (seconds < 7_200) return `${Math.round(seconds / 60)} min`;
    if (seconds < 172_800) return `${Math.round(seconds / 3_600)} h`;
    return `${Math.round(seconds / 86_400)} days`;
  }

  /** The description of proposal `id`, from its `ProposalCreated` event (made `votingDelay` blocks before the snapshot). */
  async #description(id: bigint, snapshotBlock: bigint): Promise<string | undefined> {
    const from = Math.max(this.#options.fromBlock ?? 0, 0);
    const logs = await this.#l1Provider().getLogs({
      address: this.#options.addresses.governor,
      topics: [this.#governor.interface.getEvent("ProposalCreated").topicHash],
      fromBlock: from,
      toBlock: Number(snapshotBlock),
    });
    for (const log of [...logs].reverse()) {
      const event = this.#parseGovernorLog(log);
      if (event?.args.proposalId === id) return event.args.description as string;
    }
    return undefined;
  }

  /** Whether the L2 messenger relayed the message an executed proposal sent, found from the timelock's execution. */
  async #l2Outcome(targets: string[], values: bigint[], calldatas: string[], descriptionHash: string): Promise<ProposalStatus["l2"]> {
    const salt = saltOf(this.#options.addresses.governor, descriptionHash);
    const operationId = await this.#timelock.hashOperationBatch(targets, values, calldatas, `0x${"00".repeat(32)}`, salt);
    const [executed] = await this.#l1Provider().getLogs({
      address: this.#options.addresses.timelock,
      topics: [this.#timelock.interface.getEvent("CallExecuted").topicHash, operationId],
      fromBlock: this.#options.fromBlock ?? 0,
    });
    if (executed === undefined) return undefined;
    const receipt = await this.#l1Provider().getTransactionReceipt(executed.transactionHash);
    const sent = receipt === null ? undefined : this.#sentMessage(receipt);
    if (sent === undefined) return undefined;
    const messageHash = crossDomainMessageHash(sent);
    const messenger = new Interface(L2_MESSENGER_ABI as unknown as string[]);
    const read = async (name: "successfulMessages" | "failedMessages") =>
      messenger.decodeFunctionResult(name, await this.#options.l2.call({ to: this.#options.addresses.l2Messenger, data: messenger.encodeFunctionData(name, [messageHash]) }))[0] as boolean;
    if (await read("successfulMessages")) return { outcome: "executed", messageHash };
    if (await read("failedMessages")) return { outcome: "failed (replayable until its deadline)", messageHash };
    return { outcome: "awaiting relay", messageHash };
  }

  /** The message the L1 messenger sent to the executor in `receipt`. */
  #sentMessage(receipt: TransactionReceipt): SentMessage | undefined {
    const messenger = this.#options.addresses.l1Messenger.toLowerCase();
    let sent: Omit<SentMessage, "value"> | undefined;
    let value = 0n;
    for (const log of receipt.logs) {
      if (log.address.toLowerCase() !== messenger) continue;
      const event = L1_MESSENGER.parseLog(log);
      if (event?.name === "SentMessage" && getAddress(event.args.target) === getAddress(this.#options.addresses.executor)) {
        sent = { target: event.args.target, sender: event.args.sender, message: event.args.message, nonce: event.args.messageNonce, gasLimit: event.args.gasLimit };
      } else if (event?.name === "SentMessageExtension1" && sent !== undefined) {
        value = event.args.value as bigint;
      }
    }
    return sent === undefined ? undefined : { ...sent, value };
  }

  #parseGovernorLog(log: { topics: readonly string[]; data: string }) {
    try {
      return this.#governor.interface.parseLog(log);
    } catch {
      return null;
    }
  }

  #signer(): Signer {
    const runner = this.#options.l1;
    if (!("getAddress" in runner) || typeof (runner as Signer).getAddress !== "function") {
      throw new GovernanceError("NO_SIGNER", "This step sends a transaction: give an account (--account, or GOV_PRIVATE_KEY)");
    }
    return runner as Signer;
  }

  #l1Provider(): Provider {
    const provider = this.#options.l1.provider;
    if (provider === null || provider === undefined) throw new Error("the L1 runner has no provider");
    return provider;
  }
}

/** Votes as people count them: one per whole token (the token has 18 decimals). */
export function formatVotes(votes: bigint): string {
  const [whole, fraction = ""] = formatUnits(votes, 18).split(".");
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  const trimmed = fraction.replace(/0+$/, "");
  return trimmed === "" ? grouped : `${grouped}.${trimmed}`;
}

/** Whether a proposal in `state` may yet reach the step asked for (so waiting, not a new proposal, is the answer). */
function stillAhead(state: ProposalStateName): boolean {
  return state === "Pending" || state === "Active" || state === "Succeeded" || state === "Queued";
}

/** GovernorTimelockControl's salt for a proposal's timelock operation: the governor's address XOR the description hash. */
function saltOf(governor: string, descriptionHash: string): string {
  const mask = BigInt(solidityPacked(["address", "uint96"], [governor, 0n]));
  return `0x${(mask ^ BigInt(descriptionHash)).toString(16).padStart(64, "0")}`;
}

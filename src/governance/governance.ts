import { getAddress, Interface, type ContractRunner, type Provider, type Signer } from "ethers";
import type { Address } from "viem";

import { contractAt } from "../common/artifacts.ts";
import type { PrimaryToken, ProtocolGovernor, ProtocolTimelock } from "../../typechain-types/index.ts";
import { GovernanceError } from "./errors.ts";
import { formatVotes } from "./format.ts";
import { crossDomainMessageHash, describeL2Call, l2CallsOf, type L2Call, type ProtocolChange } from "@avn/protocol/governance/proposal";
import { buildProposal, tooLateForL2, type VoteChoice } from "@avn/protocol/governance/rules";
import { SUPPORT } from "@avn/protocol/constants";
import { decodedRevert, revertReason } from "./revert-reason.ts";
import { readStatus, sentMessageIn, type GovernanceAddresses, type ProposalStatus, type StatusContext } from "./status.ts";

export { GovernanceError, type GovernanceErrorCode } from "./errors.ts";
export { formatVotes } from "./format.ts";
export { PROPOSAL_STATES, type GovernanceAddresses, type L2Outcome, type ProposalStateName, type ProposalStatus } from "./status.ts";

export { L2_DEADLINE_SLACK_SECONDS, type VoteChoice } from "@avn/protocol/governance/rules";

export interface GovernanceOptions {
  /** A signer for the steps that send transactions; a provider is enough for `status` and `list`. */
  l1: ContractRunner;
  l2: Provider;
  addresses: GovernanceAddresses;
  /** The L1's seconds per block, to turn blocks left into time (12 live, 2 on the devnet). */
  l1BlockSeconds: number;
}

export interface ProposeOptions {
  note?: string;
  /** L2 gas the messenger guarantees the batch (default 1,000,000). */
  l2GasLimit?: number;
  /** Skip simulating the calls on L2 first (for a change that only an earlier, pending proposal makes valid). */
  skipL2Check?: boolean;
}

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

  /** The votes `account` holds now, its token balance and its delegate. */
  async votingPower(account: string): Promise<{ votes: bigint; balance: bigint; delegatee: string }> {
    const [votes, balance, delegatee] = await Promise.all([
      this.#token.getVotes(account),
      this.#token.balanceOf(account),
      this.#token.delegates(account),
    ]);
    return { votes, balance, delegatee };
  }

  /**
   * Proposes `changes` as one L2 batch, after simulating its calls on L2 as the executor would make them.
   * The batch may run on L2 until the vote, the timelock and `L2_DEADLINE_SLACK_SECONDS` more have passed.
   */
  async propose(changes: readonly ProtocolChange[], options: ProposeOptions = {}): Promise<bigint> {
    if (changes.length === 0) throw new GovernanceError("WRONG_STATE", "Name at least one change to propose");
    const signer = this.#signer();
    const proposer = await signer.getAddress();
    // The governor counts the votes of the block before the proposal's: those of the latest block now.
    const [threshold, votes] = await Promise.all([this.#governor.proposalThreshold(), this.#token.getVotes(proposer)]);
    if (votes < threshold) {
      throw new GovernanceError(
        "BELOW_THRESHOLD",
        `Proposing needs ${formatVotes(threshold)} votes; ${proposer} has ${formatVotes(votes)} (tokens vote once delegated: npm run gov -- delegate)`,
      );
    }
    const { proposal, earliestRun } = await this.#proposalWithTiming(changes, proposer, options);
    if (options.skipL2Check !== true) await this.#simulateOnL2(changes, earliestRun);
    const receipt = await (
      await this.#governor.propose(proposal.targets, proposal.values, proposal.calldatas, proposal.description)
    ).wait();
    for (const log of receipt?.logs ?? []) {
      const event = this.#governor.interface.parseLog(log);
      if (event?.name === "ProposalCreated") return event.args.proposalId as bigint;
    }
    throw new Error("the proposal transaction emitted no ProposalCreated event");
  }

  /** The proposal `propose` sends for `changes` (the rules shared with the web app: `buildProposal`). */
  async proposalFor(changes: readonly ProtocolChange[], proposer: string, options: Pick<ProposeOptions, "note" | "l2GasLimit"> = {}) {
    return (await this.#proposalWithTiming(changes, proposer, options)).proposal;
  }

  /** The proposal, and the earliest time its batch can run on L2 (after the whole vote and the timelock). */
  async #proposalWithTiming(changes: readonly ProtocolChange[], proposer: string, options: Pick<ProposeOptions, "note" | "l2GasLimit">) {
    const { addresses, l1BlockSeconds } = this.#options;
    const [votingDelay, votingPeriod, timelockDelay, l1Latest, l2Latest] = await Promise.all([
      this.#governor.votingDelay(),
      this.#governor.votingPeriod(),
      this.#timelock.getMinDelay(),
      this.#l1Provider().getBlock("latest"),
      this.#options.l2.getBlock("latest"),
    ]);
    const now = BigInt(Math.max(l1Latest!.timestamp, l2Latest!.timestamp));
    const earliestRun = BigInt(l2Latest!.timestamp) + (votingDelay + votingPeriod) * BigInt(Math.floor(l1BlockSeconds)) + timelockDelay;
    const proposal = buildProposal({
      changes,
      note: options.note,
      proposer: getAddress(proposer) as Address,
      timing: { votingDelay, votingPeriod, timelockDelay, now },
      l1BlockSeconds,
      l1Messenger: addresses.l1Messenger as Address,
      executor: addresses.executor as Address,
      l2: addresses.l2,
      l2GasLimit: options.l2GasLimit,
    });
    return { proposal, earliestRun };
  }

  /** Casts the signer's votes on proposal `id`. */
  async vote(id: bigint, choice: VoteChoice, reason = ""): Promise<bigint> {
    const voter = await this.#signer().getAddress();
    const status = await this.status(id);
    if (status.state !== "Active" || status.deadlineBlock <= status.block) {
      throw new GovernanceError(status.state === "Pending" ? "TOO_EARLY" : "WRONG_STATE", `Cannot vote: ${status.next}`);
    }
    if (await this.#governor.hasVoted(id, voter))
      throw new GovernanceError("ALREADY_VOTED", `${voter} has already voted on proposal ${id}`);
    const weight = await this.#governor.getVotes(voter, status.snapshotBlock);
    if (weight === 0n) {
      throw new GovernanceError(
        "NO_VOTES",
        `${voter} had no votes at the proposal's snapshot (block ${status.snapshotBlock}): votes count only if delegated before it`,
      );
    }
    await (await this.#governor.castVoteWithReason(id, SUPPORT[choice], reason)).wait();
    return weight;
  }

  /** Queues a proposal that passed into the timelock; returns when the timelock releases it. */
  async queue(id: bigint): Promise<bigint> {
    this.#signer();
    const status = await this.status(id);
    if (status.state !== "Succeeded") {
      const early = status.state === "Pending" || status.state === "Active";
      throw new GovernanceError(
        early ? "TOO_EARLY" : "WRONG_STATE",
        `Cannot queue: ${status.state === "Queued" ? "it is queued already; " : ""}${status.next}`,
      );
    }
    await (await this.#governor["queue(uint256)"](id)).wait();
    return this.#governor.proposalEta(id);
  }

  /**
   * Executes a queued proposal whose timelock delay has passed, paying what ETH its actions send beyond
   * what the timelock holds; returns the hash of the L2 message it sent.
   */
  async execute(id: bigint): Promise<{ messageHash: string | undefined }> {
    this.#signer();
    const status = await this.status(id);
    if (status.state !== "Queued" || status.eta === undefined || status.eta > status.time) {
      const early = status.state === "Pending" || status.state === "Active" || status.state === "Succeeded" || status.state === "Queued";
      throw new GovernanceError(early ? "TOO_EARLY" : "WRONG_STATE", `Cannot execute: ${status.next}`);
    }
    // Executing a batch its deadline would refuse only spends gas and leaves a message that can never run.
    if (tooLateForL2(status.time, status.l2Deadline)) {
      throw new GovernanceError(
        "WRONG_STATE",
        `Cannot execute: its L2 batch must run by ${new Date(Number(status.l2Deadline) * 1000).toISOString()}, too soon for the bridge to carry it; propose it again`,
      );
    }
    const held = await this.#l1Provider().getBalance(this.#options.addresses.timelock);
    const value = status.value > held ? status.value - held : 0n;
    const receipt = await (await this.#governor["execute(uint256)"](id, { value })).wait();
    const sent = receipt === null ? undefined : sentMessageIn(receipt, this.#options.addresses);
    return { messageHash: sent === undefined ? undefined : crossDomainMessageHash(sent) };
  }

  /** Everything about proposal `id` (throws UNKNOWN_PROPOSAL for an id the governor never saw). */
  async status(id: bigint): Promise<ProposalStatus> {
    const status = await readStatus(this.#statusContext(), id);
    if (status === undefined) throw new GovernanceError("UNKNOWN_PROPOSAL", `No proposal ${id} on this governor`);
    return status;
  }

  /** Every proposal the governor stores, oldest first. */
  async list(): Promise<ProposalStatus[]> {
    const count = await this.#governor.proposalCount();
    const statuses: ProposalStatus[] = [];
    for (let index = 0n; index < count; index += 1n) statuses.push(await this.status((await this.#governor.proposalDetailsAt(index))[0]));
    return statuses;
  }

  /**
   * Tries each L2 call against today's L2 state as the executor would make it. A read-only call cannot
   * carry one call's effects to the next, so a call on a contract whose admin role an earlier call of the
   * batch accepts is tried as that contract's admin of today, who holds the role the executor will.
   */
  async #simulateOnL2(changes: readonly ProtocolChange[], earliestRun: bigint): Promise<void> {
    const { addresses, l2 } = this.#options;
    const calls: L2Call[] = changes.flatMap((change) => l2CallsOf(change, addresses.l2));
    const accepting = new Set<string>();
    for (const [index, call] of calls.entries()) {
      let from = addresses.executor;
      if (accepting.has(call.target.toLowerCase())) {
        from = AccessControlDefaultAdmin.decodeFunctionResult(
          "defaultAdmin",
          await l2.call({ to: call.target, data: AccessControlDefaultAdmin.encodeFunctionData("defaultAdmin") }),
        )[0] as string;
      }
      if (call.data.startsWith(ACCEPT_ADMIN_SELECTOR)) accepting.add(call.target.toLowerCase());
      try {
        await l2.call({ from, to: call.target, data: call.data, value: call.value });
      } catch (error) {
        // An admin handover whose delay has not passed today will have by the time the batch can run.
        const reason = decodedRevert(error);
        if (reason?.name === "AccessControlEnforcedDefaultAdminDelay" && (reason.args[0] as bigint) < earliestRun) continue;
        throw new GovernanceError(
          "L2_CHECK_FAILED",
          `Call ${index + 1} (${describeL2Call(call, addresses.l2)}) would fail on L2 today: ${revertReason(error)}. ` +
            "If a pending proposal makes it valid (accept-admin, say), propose with --skip-l2-check",
        );
      }
    }
  }

  #statusContext(): StatusContext {
    const { l2, addresses, l1BlockSeconds } = this.#options;
    return { governor: this.#governor, timelock: this.#timelock, l1: this.#l1Provider(), l2, addresses, l1BlockSeconds };
  }

  #signer(): Signer {
    const runner = this.#options.l1;
    if (typeof (runner as Partial<Signer>).getAddress !== "function") {
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

const AccessControlDefaultAdmin = new Interface([
  "function defaultAdmin() view returns (address)",
  "function acceptDefaultAdminTransfer()",
]);
const ACCEPT_ADMIN_SELECTOR = AccessControlDefaultAdmin.getFunction("acceptDefaultAdminTransfer")!.selector;

import { Interface } from "ethers";
import type { Logger } from "pino";

import type { JsonRpc } from "../chains/evm/balance-slot.ts";
import { EpochSettlements } from "../chains/evm/epoch-settlement.ts";
import { describeError } from "../common/describe-error.ts";
import { PollingLoop } from "../common/polling-loop.ts";
import type { NodeMetrics } from "./health.ts";
import type { TxOutcome, TxSender } from "./tx-sender.ts";

const REWARD_POOLS = new Interface([
  "function voteRewardsRoot(uint256 epoch, bytes32 root, uint256[] licenseIds)",
  "function hasVotedRoot(uint256 epoch, uint256 licenseId) view returns (bool)",
]);

export interface RewardsVoterOptions {
  /** The L2, through whichever endpoint is in use at each call. */
  l2: JsonRpc;
  rewardPools: string;
  /** The licenses delegated to this node's burner (its live licenses: the node beats for them). */
  licenses: () => readonly bigint[];
  sender: Pick<TxSender, "send">;
  intervalMs: number;
  metrics: NodeMetrics;
  logger: Logger;
  onError: () => void;
}

/**
 * The node's part in paying the network (docs/verification.md, "Epoch rewards"): once an ended epoch's
 * settlement opens, it computes the epoch's payouts from the registries' events, exactly as every other node
 * does, and votes their Merkle root on `RewardPools` with each of its licenses that has not voted in the
 * current round. Checked every `intervalMs`, for the two epochs whose voting can be open.
 */
export class RewardsVoter {
  readonly #options: RewardsVoterOptions;
  readonly #log: Logger;
  readonly #loop: PollingLoop<void>;
  /** Keeps the events it read between passes. */
  readonly #settlements: EpochSettlements;
  /** Votes sent and not yet mined, by epoch: not sent again meanwhile. */
  readonly #pending = new Map<number, Promise<TxOutcome>>();

  constructor(options: RewardsVoterOptions) {
    this.#options = options;
    this.#log = options.logger.child({ component: "rewards-voter" });
    this.#settlements = new EpochSettlements(options.l2, options.rewardPools);
    this.#loop = new PollingLoop(
      () => this.vote().then(() => undefined),
      options.intervalMs,
      (error) => {
        this.#log.warn({ error: describeError(error) }, "rewards root vote failed; trying again at the next tick");
        options.onError();
      },
    );
  }

  start(): void {
    this.#loop.start();
  }

  stop(): Promise<void> {
    return this.#loop.stop();
  }

  /** One pass: votes every epoch whose settlement is open and unsettled; resolves with the epochs voted. */
  async vote(): Promise<number[]> {
    const settlements = this.#settlements;
    const { epoch: current, timestamp } = await settlements.currentEpoch();
    const voted: number[] = [];
    for (const epoch of [current - 2, current - 1].filter((epoch) => epoch >= 0)) {
      if (this.#pending.has(epoch)) continue;
      const state = await settlements.state(epoch);
      if (state.accepted || timestamp < state.settlementOpensAt || timestamp >= state.votingClosesAt) continue;
      const licenses = await this.#notVoted(epoch);
      if (licenses.length === 0) continue;
      const { tree, throughBlock } = await settlements.rewards(epoch);
      const data = REWARD_POOLS.encodeFunctionData("voteRewardsRoot", [epoch, tree.root, licenses]);
      let outcome: Promise<TxOutcome>;
      try {
        ({ outcome } = await this.#options.sender.send("rewardsRoot", this.#options.rewardPools, data));
      } catch (error) {
        // Other nodes' votes may have accepted the root between the read above and this vote's gas estimate,
        // which then reverts (`RewardPools_RootAccepted`): the network's work is done, and the L2 endpoint is
        // not at fault, so this is no failure to fail over from.
        // The send's error is the one to report when the settlement cannot be read again either.
        const accepted = await settlements.state(epoch).then(
          (state) => state.accepted,
          () => false,
        );
        if (!accepted) throw error;
        this.#log.info({ epoch }, "rewards root accepted by other nodes' votes before this one was sent");
        continue;
      }
      this.#pending.set(epoch, outcome);
      void outcome.then((result) => {
        this.#pending.delete(epoch);
        this.#options.metrics.transactions.inc({ kind: "rewardsRoot", outcome: result });
      });
      this.#log.info(
        { epoch, root: tree.root, payouts: tree.payouts.length, throughBlock, licenses: licenses.map(String) },
        "rewards root voted",
      );
      voted.push(epoch);
    }
    return voted;
  }

  async #notVoted(epoch: number): Promise<bigint[]> {
    const licenses = [...this.#options.licenses()];
    const voted = await Promise.all(
      licenses.map(async (licenseId) => {
        const data = REWARD_POOLS.encodeFunctionData("hasVotedRoot", [epoch, licenseId]);
        const result = await this.#options.l2.request<string>("eth_call", [{ to: this.#options.rewardPools, data }, "latest"]);
        return REWARD_POOLS.decodeFunctionResult("hasVotedRoot", result)[0] as boolean;
      }),
    );
    return licenses.filter((_, index) => !voted[index]);
  }
}

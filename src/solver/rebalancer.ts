import { type Bridge, BridgeError } from "@avn/bridge";
import type { Logger } from "pino";

import type { JournaledWithdrawal, SolverJournal } from "./journal.ts";
import { finalizationNotElapsed } from "./portal-errors.ts";

type Asset = JournaledWithdrawal["asset"];
type PerAsset = Record<Asset, bigint>;

/** When the solver moves its earnings back to L1 (settings: src/solver/config.ts). */
export interface RebalancePolicy {
  /** An L1 balance below this starts a withdrawal of the asset from the L2. */
  lowWater: PerAsset;
  /** What stays on the L2 (ETH for the settlements' gas). */
  keepOnL2: PerAsset;
  /** A withdrawal smaller than this is not worth its L1 gas. */
  minWithdrawal: PerAsset;
}

/**
 * Moves the escrow the solver earns on the L2 back to its L1 inventory through the OP standard bridge, whose
 * withdrawals it drives to the end: started on the L2, proven on L1 once an output covers them, finalized after the
 * challenge period (seven days live, seconds on the devnet). One withdrawal per asset at a time; each is journaled,
 * so a restart goes on with it. Every call sends from the solver's key, so the caller runs it between its own
 * sends and resets its nonce counters after (`onSent`).
 */
export class Rebalancer {
  readonly #bridge: Bridge;
  readonly #journal: SolverJournal;
  readonly #policy: RebalancePolicy;
  readonly #logger: Logger;

  constructor(options: { bridge: Bridge; journal: SolverJournal; policy: RebalancePolicy; logger: Logger }) {
    this.#bridge = options.bridge;
    this.#journal = options.journal;
    this.#policy = options.policy;
    this.#logger = options.logger;
  }

  /** Drives pending withdrawals one step and starts one for an asset that runs low on L1. Returns whether it sent anything. */
  async pass(l1Inventory: PerAsset, l2Balances: PerAsset): Promise<boolean> {
    let sent = false;
    const pending = this.#journal.pendingWithdrawals();
    for (const withdrawal of pending) {
      try {
        sent = (await this.#advance(withdrawal)) || sent;
      } catch (error) {
        // A block early for the portal: the next block finalizes it.
        if (!finalizationNotElapsed(error)) throw error;
      }
    }
    for (const asset of ["eth", "token"] as const) {
      if (pending.some((withdrawal) => withdrawal.asset === asset)) continue;
      if (l1Inventory[asset] >= this.#policy.lowWater[asset]) continue;
      const amount = l2Balances[asset] - this.#policy.keepOnL2[asset];
      if (amount < this.#policy.minWithdrawal[asset]) continue;
      const l2TxHash = asset === "eth" ? await this.#bridge.withdrawEth(amount) : await this.#bridge.withdrawPrimaryToken(amount);
      this.#journal.addWithdrawal({ l2TxHash, asset, amount });
      this.#logger.info({ asset, amount: amount.toString(), l2TxHash }, "rebalancing: withdrawal started");
      sent = true;
    }
    return sent;
  }

  async #advance(withdrawal: JournaledWithdrawal): Promise<boolean> {
    const { status } = await this.#bridge.status(withdrawal.l2TxHash);
    const where = { asset: withdrawal.asset, amount: withdrawal.amount.toString(), l2TxHash: withdrawal.l2TxHash };
    if (status === "READY_TO_PROVE") {
      await this.#bridge.prove(withdrawal.l2TxHash);
      this.#journal.setWithdrawalState(withdrawal.l2TxHash, "proven");
      this.#logger.info(where, "rebalancing: withdrawal proven");
      return true;
    }
    if (status === "READY_FOR_RELAY") {
      try {
        await this.#bridge.finalize(withdrawal.l2TxHash);
      } catch (error) {
        if (!(error instanceof BridgeError && error.code === "ALREADY_FINALIZED")) throw error;
      }
      this.#journal.setWithdrawalState(withdrawal.l2TxHash, "finalized");
      // The portal finalizes a withdrawal whose relay fails (an L1 bridge short of ETH) without reverting: say so.
      const after = await this.#bridge.status(withdrawal.l2TxHash);
      if (after.status === "RELAYED") this.#logger.info(where, "rebalancing: withdrawal finalized");
      else this.#logger.error({ ...where, status: after.status }, "rebalancing: withdrawal finalized on L1 but not relayed; replay it");
      return true;
    }
    if (status === "RELAYED") this.#journal.setWithdrawalState(withdrawal.l2TxHash, "finalized");
    return false;
  }
}

import { keccak256, Transaction, type Provider, type TransactionReceipt, type Wallet } from "ethers";
import type { Logger } from "pino";

import { PollingLoop } from "../common/polling-loop.ts";
import { describeError } from "../common/describe-error.ts";
import { classifySendError, type SendError } from "./classify-send-error.ts";
import { bumpedFees, freshFees, type Fees } from "./fees.ts";
import type { JournaledReveal, NodeStateStore, StoredTx, VoteIntent } from "./state-store.ts";
import { receiptOfAny, signCall, signCancellation, signReplacement } from "./transactions.ts";

export interface TxSenderOptions {
  wallet: Wallet;
  /** The L2 provider to use now (the node fails over between its URLs). */
  provider: () => Provider;
  store: NodeStateStore;
  chainId: bigint;
  /** The lowest pending transaction, not mined after this long, is signed again with higher fees (same nonce). */
  feeBumpAfterMs: number;
  /** Fee bumps stop here: a node never offers more per gas than this. */
  maxFeePerGas: bigint;
  /** How often pending transactions are checked. */
  checkIntervalMs?: number;
  /**
   * A journaled transaction's votes were not cast (it was dropped, rejected, or it reverted): they are
   * forgotten; the job scan must go back to this L2 block.
   */
  onVotesLost?: (earliestJobBlock: number | undefined) => void;
  /** A journaled transaction was mined and succeeded (its logs may still say some of its work was skipped). */
  onMined?: (tx: StoredTx, receipt: TransactionReceipt) => void;
  onReverted?: (tx: StoredTx) => void;
  /** The L2 RPC failed (not the transaction): the node moves to its next URL. */
  onUpstreamError?: () => void;
  logger: Logger;
}

export type TxOutcome = "mined" | "reverted" | "dropped";

const GAS_MARGIN_PERCENT = 130n;

/**
 * Sends the burner's transactions one at a time with nonces it manages itself: every transaction is
 * signed, journaled (with the votes it carries) and only then broadcast. A watcher follows the pending
 * ones:
 * - mined ends a transaction; reverted forgets its votes;
 * - the lowest pending nonce not mined after `feeBumpAfterMs` is signed again with fees raised by 12.5%,
 *   up to `maxFeePerGas` (later nonces wait behind it, so bumping them would only inflate them). Every
 *   hash is kept, since any may be the one mined;
 * - a nonce seen used by another transaction on two checks in a row drops it and its votes;
 * - a transaction the node refuses outright (too much gas for a block, say) is replaced by a plain
 *   transfer to itself, so that its nonce cannot block every later one, and its votes are forgotten;
 * - one whose fee cap fell below a risen base fee is signed again at once, same nonce, with fees above
 *   the pending block's base fee, and sent to the same RPC (the RPC is not at fault).
 * What a failed broadcast means is `classifySendError`'s answer, not this class's guess.
 * After a restart, `recover()` picks the journal up where it stopped: it never signs a journaled nonce
 * again with new content, except to cancel it.
 */
export class TxSender {
  readonly #options: TxSenderOptions;
  readonly #logger: Logger;
  readonly #watcher: PollingLoop<void>;
  readonly #sentAt = new Map<number, number>();
  readonly #unfunded = new Set<number>();
  readonly #suspectedDropped = new Set<number>();
  readonly #waiters = new Map<number, (outcome: TxOutcome) => void>();
  #queue: Promise<unknown> = Promise.resolve();
  #nextNonce = 0;

  constructor(options: TxSenderOptions) {
    this.#options = options;
    this.#logger = options.logger.child({ component: "tx-sender" });
    this.#watcher = new PollingLoop(
      () => this.#checkPending(),
      options.checkIntervalMs ?? 1_000,
      (error) => {
        options.onUpstreamError?.();
        this.#logger.warn({ error: describeError(error) }, "checking pending transactions failed; retrying");
      },
    );
  }

  /** Resumes the journal: settles or re-broadcasts pending transactions, then starts watching. */
  async recover(): Promise<void> {
    await this.#resyncNonce();
    const pending = this.#options.store.pendingTxs();
    if (pending.length > 0) this.#logger.info({ transactions: pending.length }, "resuming the journaled transactions of the last run");
    for (const tx of pending) this.#sentAt.set(tx.id, Date.now());
    await this.#checkPending(true);
    this.#watcher.start();
  }

  /**
   * Signs, journals and broadcasts a transaction to `to`. Resolves once it is broadcast (or journaled for
   * the watcher to broadcast), with the journal id and a promise of its outcome. Throws when gas
   * estimation fails (the call would revert). `extraGas` is added to the estimate. A commit journals the
   * reveal that will cast its votes (`reveal`), in the same journal transaction.
   */
  send(
    kind: string,
    to: string,
    data: string,
    votes: VoteIntent[] = [],
    extraGas = 0n,
    reveal?: JournaledReveal,
  ): Promise<{ id: number; outcome: Promise<TxOutcome> }> {
    const run = this.#queue.then(() => this.#send(kind, to, data, votes, extraGas, reveal));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  /** Stops watching; journaled transactions stay pending for the next start. */
  async stop(): Promise<void> {
    await this.#queue;
    await this.#watcher.stop();
  }

  async #send(kind: string, to: string, data: string, votes: VoteIntent[], extraGas: bigint, reveal?: JournaledReveal) {
    const { wallet, store, chainId } = this.#options;
    const provider = this.#options.provider();
    const estimate = await provider.estimateGas({ from: wallet.address, to, data });
    const fees = await this.#currentFees();
    const nonce = this.#nextNonce;
    const raw = await signCall({ wallet, chainId }, { nonce, to, data, gasLimit: (estimate * GAS_MARGIN_PERCENT) / 100n + extraGas }, fees);
    const id = store.recordTx({ nonce, kind, raw, hash: keccak256(raw) }, votes, reveal);
    this.#nextNonce = nonce + 1;
    this.#sentAt.set(id, Date.now());
    const outcome = new Promise<TxOutcome>((resolve) => this.#waiters.set(id, resolve));
    await this.#broadcast({ id, nonce, kind, raw, hashes: [keccak256(raw)] });
    return { id, outcome };
  }

  async #currentFees(): Promise<Fees> {
    return freshFees(await this.#options.provider().getFeeData(), this.#options.maxFeePerGas);
  }

  async #resyncNonce(): Promise<void> {
    const onChain = await this.#options.provider().getTransactionCount(this.#options.wallet.address, "pending");
    this.#nextNonce = Math.max(this.#nextNonce, onChain, (this.#options.store.highestNonce() ?? -1) + 1);
  }

  /**
   * Broadcasts a journaled transaction; what a failure means decides what happens to it. `mayRaiseFees`
   * is false for a transaction just signed again with higher fees, so that a base fee still above them
   * waits for the watcher's next bump instead of looping here.
   */
  async #broadcast(tx: StoredTx, mayRaiseFees = true): Promise<void> {
    try {
      await this.#options.provider().broadcastTransaction(tx.raw);
      this.#unfunded.delete(tx.id);
    } catch (error) {
      await this.#onBroadcastFailure(tx, classifySendError(error), mayRaiseFees);
    }
  }

  async #onBroadcastFailure(tx: StoredTx, failure: SendError, mayRaiseFees: boolean): Promise<void> {
    const fields = { txId: tx.id, txKind: tx.kind, nonce: tx.nonce, error: failure.message, errorKind: failure.kind };
    switch (failure.kind) {
      case "already-known":
        return;
      case "insufficient-funds":
        if (!this.#unfunded.has(tx.id))
          this.#logger.error(
            { ...fields, burner: this.#options.wallet.address },
            "the burner cannot pay for a transaction: send it L2 ETH",
          );
        this.#unfunded.add(tx.id);
        return;
      case "nonce-too-low":
      case "nonce-too-high":
        // Someone else used this burner's nonces: count again from the chain; the watcher drops what is lost.
        await this.#resyncNonce();
        return;
      case "replacement-underpriced":
      case "underpriced":
        return; // Left for the watcher's next fee bump.
      case "fee-cap-below-base-fee":
        // The base fee rose since the fees were read: the RPC is fine, the price is stale.
        if (!mayRaiseFees) {
          this.#logger.warn(fields, "the fee cap is still below the base fee; raising it again at the next fee bump");
          return;
        }
        this.#logger.info(fields, "the base fee rose above the transaction's fee cap: signing it again with higher fees");
        await this.#bump(tx, await this.#pendingBaseFee());
        return;
      case "gas-limit-too-high":
      case "intrinsic-gas":
      case "invalid":
        await this.#cancel(tx, failure);
        return;
      case "execution-reverted":
        // An RPC that simulates before it accepts: the RPC is not at fault; the watcher sends it again.
        this.#logger.warn(fields, "broadcasting a transaction failed: the RPC says it reverts; retrying");
        return;
      case "rpc-unavailable":
      case "unknown":
        this.#options.onUpstreamError?.();
        this.#logger.warn(fields, "broadcasting a transaction failed; retrying");
        return;
    }
  }

  /** The base fee of the block being built, which a fee cap must reach; 0 when the RPC does not say. */
  async #pendingBaseFee(): Promise<bigint> {
    const block = await this.#options
      .provider()
      .getBlock("pending")
      .catch(() => null);
    return block?.baseFeePerGas ?? 0n;
  }

  /** Replaces a transaction the node refuses with a plain transfer to the burner itself, same nonce. */
  async #cancel(tx: StoredTx, failure: SendError): Promise<void> {
    const { wallet, store, chainId } = this.#options;
    const raw = await signCancellation({ wallet, chainId }, tx.nonce, await this.#currentFees());
    this.#logger.error(
      { txId: tx.id, txKind: tx.kind, nonce: tx.nonce, error: failure.message, errorKind: failure.kind },
      "transaction refused; cancelling its nonce, its votes will be sent again",
    );
    const rescanFrom = store.forgetTx(tx.id, "dropped");
    this.#settle(tx.id, "dropped");
    const id = store.recordTx({ nonce: tx.nonce, kind: "cancel", raw, hash: keccak256(raw) });
    this.#sentAt.set(id, Date.now());
    this.#options.onVotesLost?.(rescanFrom);
    await this.#options
      .provider()
      .broadcastTransaction(raw)
      .catch((error: unknown) => {
        this.#logger.warn({ txId: id, nonce: tx.nonce, error: describeError(error) }, "broadcasting the cancellation failed; retrying");
      });
  }

  async #checkPending(rebroadcastAll = false): Promise<void> {
    const { store, wallet } = this.#options;
    const pending = store.pendingTxs();
    if (pending.length === 0) return;
    const provider = this.#options.provider();
    const usedNonces = await provider.getTransactionCount(wallet.address, "latest");
    for (const tx of pending) {
      const receipt = await receiptOfAny(provider, tx.hashes);
      if (receipt !== undefined) {
        this.#suspectedDropped.delete(tx.id);
        if (receipt.status === 1) {
          store.markTx(tx.id, "mined");
          this.#options.onMined?.(tx, receipt);
          this.#settle(tx.id, "mined");
        } else {
          this.#options.onReverted?.(tx);
          this.#options.onVotesLost?.(store.forgetTx(tx.id, "reverted"));
          this.#settle(tx.id, "reverted");
        }
        continue;
      }
      if (tx.nonce < usedNonces) {
        // Used, by none of our hashes; seen twice in a row, since a lagging upstream may miss a receipt.
        if (!this.#suspectedDropped.has(tx.id)) {
          this.#suspectedDropped.add(tx.id);
          continue;
        }
        this.#suspectedDropped.delete(tx.id);
        const rescanFrom = store.forgetTx(tx.id, "dropped");
        this.#logger.warn(
          { txId: tx.id, txKind: tx.kind, nonce: tx.nonce },
          "transaction replaced by another; its votes will be sent again",
        );
        this.#options.onVotesLost?.(rescanFrom);
        this.#settle(tx.id, "dropped");
        continue;
      }
      const waitedLongEnough = Date.now() - (this.#sentAt.get(tx.id) ?? 0) >= this.#options.feeBumpAfterMs;
      if (tx.nonce === usedNonces && waitedLongEnough && !this.#unfunded.has(tx.id)) await this.#bump(tx);
      else if (rebroadcastAll || this.#unfunded.has(tx.id)) await this.#broadcast(tx);
    }
  }

  /** Signs `tx` again, same nonce, with `bumpedFees` (`baseFee`: the pending block's, when known). */
  async #bump(tx: StoredTx, baseFee = 0n): Promise<void> {
    const previous = Transaction.from(tx.raw);
    const fees = bumpedFees(previous, await this.#currentFees(), this.#options.maxFeePerGas, baseFee);
    const fields = { txId: tx.id, txKind: tx.kind, nonce: tx.nonce };
    this.#sentAt.set(tx.id, Date.now());
    if (fees === undefined) {
      this.#logger.warn(fields, "transaction not mined and its fee is at the cap (MAX_FEE_PER_GAS_GWEI); waiting");
      await this.#broadcast(tx, false);
      return;
    }
    const raw = await signReplacement(this.#options.wallet, previous, fees);
    const hash = keccak256(raw);
    this.#options.store.replaceTx(tx.id, raw, hash);
    this.#logger.info({ ...fields, maxFeePerGas: String(fees.maxFeePerGas) }, "transaction sent again with higher fees");
    await this.#broadcast({ ...tx, raw, hashes: [...tx.hashes, hash] }, false);
  }

  #settle(id: number, outcome: TxOutcome): void {
    this.#sentAt.delete(id);
    this.#unfunded.delete(id);
    this.#waiters.get(id)?.(outcome);
    this.#waiters.delete(id);
  }
}

import { keccak256, Transaction, type Provider, type TransactionReceipt, type Wallet } from "ethers";

import { PollingLoop } from "../common/polling-loop.ts";
import type { NodeStateStore, StoredTx, VoteIntent } from "./state-store.ts";

export interface TxSenderOptions {
  wallet: Wallet;
  provider: Provider;
  store: NodeStateStore;
  chainId: bigint;
  /** A transaction not mined after this long is signed again with higher fees (same nonce). */
  feeBumpAfterMs: number;
  /** How often pending transactions are checked. */
  checkIntervalMs?: number;
  /**
   * A journaled transaction's votes were not cast (it was dropped, or it reverted): they are forgotten;
   * the job scan should go back to this L2 block.
   */
  onVotesLost?: (earliestJobBlock: number | undefined) => void;
  onReverted?: (tx: StoredTx) => void;
  log: (level: "info" | "warn" | "error", message: string) => void;
}

// geth and anvil accept a replacement only when both fee fields rise by at least 10%.
const BUMP_NUMERATOR = 1125n;
const BUMP_DENOMINATOR = 1000n;
const GAS_MARGIN_PERCENT = 130n;

/**
 * Sends the burner's transactions one at a time with nonces it manages itself: every transaction is
 * signed, journaled (with the votes it carries) and only then broadcast. A watcher follows each pending
 * one: mined (or reverted) ends it; not mined after `feeBumpAfterMs` means the same nonce is signed again
 * with fees raised by 12.5% (every hash is kept, any may be mined); a nonce used by another transaction
 * drops it and its votes. After a restart `recover()` picks the journal up where it stopped: it never
 * signs a new transaction for a nonce already journaled.
 */
export class TxSender {
  readonly #options: TxSenderOptions;
  readonly #watcher: PollingLoop<void>;
  readonly #sentAt = new Map<number, number>();
  readonly #waiters = new Map<number, Array<(status: "mined" | "reverted" | "dropped") => void>>();
  #queue: Promise<unknown> = Promise.resolve();
  #nextNonce = 0;

  constructor(options: TxSenderOptions) {
    this.#options = options;
    this.#watcher = new PollingLoop(() => this.#checkPending(), options.checkIntervalMs ?? 1_000, (error) =>
      options.log("warn", `checking pending transactions failed: ${describe(error)} (retrying)`),
    );
  }

  /** Resumes the journal: settles or re-broadcasts pending transactions, then starts watching. */
  async recover(): Promise<void> {
    const onChain = await this.#options.provider.getTransactionCount(this.#options.wallet.address, "pending");
    this.#nextNonce = Math.max(onChain, (this.#options.store.highestNonce() ?? -1) + 1);
    const pending = this.#options.store.pendingTxs();
    if (pending.length > 0) this.#options.log("info", `resuming ${pending.length} journaled transaction(s) from the last run`);
    for (const tx of pending) this.#sentAt.set(tx.id, Date.now());
    await this.#checkPending(true);
    this.#watcher.start();
  }

  /**
   * Signs, journals and broadcasts a transaction to `to`. Resolves once it is broadcast, with the
   * journal id and a promise of its outcome. Throws when gas estimation fails (the call would revert)
   * or the node cannot pay for it.
   */
  send(
    kind: string,
    to: string,
    data: string,
    votes: VoteIntent[] = [],
    extraGas = 0n,
  ): Promise<{ id: number; outcome: Promise<"mined" | "reverted" | "dropped"> }> {
    const run = this.#queue.then(() => this.#send(kind, to, data, votes, extraGas));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  /** Stops watching; journaled transactions stay pending for the next start. */
  async stop(): Promise<void> {
    await this.#queue;
    await this.#watcher.stop();
  }

  /**
   * `extraGas` is added to the estimate: the estimate reflects the chain now, but a vote mined after
   * another node's may be the one that finalizes its job, which costs several times more.
   */
  async #send(kind: string, to: string, data: string, votes: VoteIntent[], extraGas: bigint) {
    const { wallet, provider, store, chainId } = this.#options;
    const estimate = await provider.estimateGas({ from: wallet.address, to, data });
    const fees = await provider.getFeeData();
    const maxPriorityFeePerGas = fees.maxPriorityFeePerGas ?? 1_000_000n;
    const maxFeePerGas = fees.maxFeePerGas ?? (fees.gasPrice ?? 1_000_000_000n) * 2n;
    const nonce = this.#nextNonce;
    const raw = await wallet.signTransaction({
      type: 2,
      chainId,
      nonce,
      to,
      data,
      gasLimit: (estimate * GAS_MARGIN_PERCENT) / 100n + extraGas,
      maxFeePerGas,
      maxPriorityFeePerGas,
    });
    const id = store.recordTx({ nonce, kind, raw, hash: keccak256(raw) }, votes);
    this.#nextNonce = nonce + 1;
    this.#sentAt.set(id, Date.now());
    const outcome = new Promise<"mined" | "reverted" | "dropped">((resolve) => this.#waiters.set(id, [resolve]));
    await this.#broadcast(id, raw);
    return { id, outcome };
  }

  /** Broadcasts a journaled transaction; a failure here leaves it pending for the watcher to retry. */
  async #broadcast(id: number, raw: string): Promise<void> {
    try {
      await this.#options.provider.broadcastTransaction(raw);
    } catch (error) {
      const text = describe(error);
      if (/already known|known transaction/i.test(text)) return;
      if (/insufficient funds/i.test(text)) {
        this.#options.log("error", `the burner ${this.#options.wallet.address} cannot pay for its transaction: fund it with L2 ETH`);
      } else if (!/nonce too low|nonce has already been used/i.test(text)) {
        this.#options.log("warn", `broadcasting transaction ${id} failed: ${text} (retrying)`);
      }
      // Nonce too low or unfunded: the watcher decides whether the nonce was used (then drops it).
    }
  }

  async #checkPending(rebroadcastAll = false): Promise<void> {
    const { provider, store, wallet } = this.#options;
    const pending = store.pendingTxs();
    if (pending.length === 0) return;
    const usedNonces = await provider.getTransactionCount(wallet.address, "latest");
    for (const tx of pending) {
      const receipt = await this.#receiptOf(tx);
      if (receipt !== undefined) {
        if (receipt.status === 1) {
          store.markTx(tx.id, "mined");
          this.#settle(tx.id, "mined");
        } else {
          this.#options.onReverted?.(tx);
          this.#options.onVotesLost?.(store.forgetTx(tx.id, "reverted"));
          this.#settle(tx.id, "reverted");
        }
        continue;
      }
      if (tx.nonce < usedNonces) {
        // The nonce is used, and by none of our hashes: this transaction can never be mined.
        const rescanFrom = store.forgetTx(tx.id, "dropped");
        this.#options.log("warn", `transaction ${tx.id} (${tx.kind}, nonce ${tx.nonce}) was replaced by another; its votes will be sent again`);
        this.#options.onVotesLost?.(rescanFrom);
        this.#settle(tx.id, "dropped");
        if (this.#nextNonce <= tx.nonce) this.#nextNonce = usedNonces;
        continue;
      }
      const sentAt = this.#sentAt.get(tx.id) ?? 0;
      if (Date.now() - sentAt >= this.#options.feeBumpAfterMs) await this.#bump(tx);
      else if (rebroadcastAll) await this.#broadcast(tx.id, tx.raw);
    }
  }

  async #receiptOf(tx: StoredTx): Promise<TransactionReceipt | undefined> {
    for (const hash of tx.hashes) {
      const receipt = await this.#options.provider.getTransactionReceipt(hash);
      if (receipt !== null) return receipt;
    }
    return undefined;
  }

  async #bump(tx: StoredTx): Promise<void> {
    const previous = Transaction.from(tx.raw);
    const fees = await this.#options.provider.getFeeData();
    const raise = (old: bigint | null, now: bigint | null) => {
      const bumped = ((old ?? 0n) * BUMP_NUMERATOR) / BUMP_DENOMINATOR + 1n;
      return now !== null && now > bumped ? now : bumped;
    };
    const raw = await this.#options.wallet.signTransaction({
      type: 2,
      chainId: previous.chainId,
      nonce: previous.nonce,
      to: previous.to,
      data: previous.data,
      gasLimit: previous.gasLimit,
      maxFeePerGas: raise(previous.maxFeePerGas, fees.maxFeePerGas),
      maxPriorityFeePerGas: raise(previous.maxPriorityFeePerGas, fees.maxPriorityFeePerGas),
    });
    this.#options.store.replaceTx(tx.id, raw, keccak256(raw));
    this.#sentAt.set(tx.id, Date.now());
    this.#options.log("info", `transaction ${tx.id} (${tx.kind}, nonce ${tx.nonce}) not mined yet: sent again with 12.5% higher fees`);
    await this.#broadcast(tx.id, raw);
  }

  #settle(id: number, status: "mined" | "reverted" | "dropped"): void {
    this.#sentAt.delete(id);
    for (const resolve of this.#waiters.get(id) ?? []) resolve(status);
    this.#waiters.delete(id);
  }
}

/** An error in one line without URLs (RPC URLs carry keys): ethers' short message where it has one. */
export function describe(error: unknown): string {
  const { shortMessage, message } = (error ?? {}) as { shortMessage?: unknown; message?: unknown };
  const text = typeof shortMessage === "string" ? shortMessage : typeof message === "string" ? message : String(error);
  return text.replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s"',)]+/gi, "<url>").split("\n")[0];
}

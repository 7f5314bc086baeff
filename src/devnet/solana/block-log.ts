import { getAddressDecoder, type Address, type ReadonlyUint8Array } from "@solana/kit";
import type { LiteSVM } from "litesvm";

import {
  ACCOUNT_AMOUNT_OFFSET,
  ACCOUNT_MINT_OFFSET,
  ACCOUNT_OWNER_OFFSET,
  isInitializedTokenAccount,
  TOKEN_PROGRAMS,
} from "../../chains/solana/token-layout.ts";

/** A token account's balance before or after a transaction, as agave's `preTokenBalances` / `postTokenBalances` entries. */
export interface TokenBalanceEntry {
  accountIndex: number;
  mint: string;
  owner: string;
  programId: string;
  uiTokenAmount: { amount: string; decimals: number; uiAmount: number | null; uiAmountString: string };
}

/** One executed transaction as `getBlock` with `transactionDetails: "accounts"` shows it. */
export interface LoggedTransaction {
  signature: string;
  accountKeys: string[];
  preTokenBalances: TokenBalanceEntry[];
  postTokenBalances: TokenBalanceEntry[];
  failed: boolean;
}

export interface LoggedBlock {
  slot: bigint;
  parentSlot: bigint;
  blockTime: number;
  transactions: LoggedTransaction[];
}

/** Slots whose blocks are kept: far more than any follower lags behind the local ledger. */
const BLOCKS_KEPT = 10_000;

/**
 * What LiteSVM does not keep: the blocks. The ledger logs each transaction it executes in the block of its
 * slot, with the token balances of its accounts before and after, so the local endpoint answers `getBlock` and
 * `getBlocks` as a validator does and a follower finds who holds what changed (and new token accounts) from the
 * blocks alone. Accounts written with `setAccount` (forged by tests) are in no block, as on a real chain.
 */
export class BlockLog {
  readonly #blocks = new Map<bigint, LoggedBlock>();
  #last: bigint | undefined;

  /** The token balances of `keys` now: call before a transaction and after it. */
  tokenBalances(svm: LiteSVM, keys: readonly Address[], decimalsOf: (mint: string) => number | undefined): TokenBalanceEntry[] {
    const entries: TokenBalanceEntry[] = [];
    keys.forEach((key, accountIndex) => {
      const account = svm.getAccount(key);
      if (!account.exists || !TOKEN_PROGRAMS.includes(account.programAddress) || !isInitializedTokenAccount(account.data)) return;
      const mint = addressAt(account.data, ACCOUNT_MINT_OFFSET);
      const amount = new DataView(account.data.buffer, account.data.byteOffset + ACCOUNT_AMOUNT_OFFSET, 8).getBigUint64(0, true);
      const decimals = decimalsOf(mint) ?? 0;
      entries.push({
        accountIndex,
        mint,
        owner: addressAt(account.data, ACCOUNT_OWNER_OFFSET),
        programId: account.programAddress,
        uiTokenAmount: { amount: amount.toString(), decimals, uiAmount: null, uiAmountString: uiAmount(amount, decimals) },
      });
    });
    return entries;
  }

  /** Adds a transaction executed at `slot`. */
  record(slot: bigint, blockTime: number, transaction: LoggedTransaction): void {
    let block = this.#blocks.get(slot);
    if (block === undefined) {
      // The ledger's slot only moves forward: the block before is the last one logged.
      block = { slot, parentSlot: this.#last ?? (slot === 0n ? 0n : slot - 1n), blockTime, transactions: [] };
      this.#last = slot;
      this.#blocks.set(slot, block);
      if (this.#blocks.size > BLOCKS_KEPT) this.#blocks.delete(this.#blocks.keys().next().value as bigint);
    }
    block.transactions.push(transaction);
  }

  block(slot: bigint): LoggedBlock | undefined {
    return this.#blocks.get(slot);
  }

  /** The slots with a block from `start` to `end` (both included), in order: `getBlocks`. */
  slots(start: bigint, end: bigint): bigint[] {
    return [...this.#blocks.keys()].filter((slot) => slot >= start && slot <= end).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  }
}

function addressAt(data: ReadonlyUint8Array, offset: number): string {
  return getAddressDecoder().decode(data.subarray(offset, offset + 32));
}

function uiAmount(amount: bigint, decimals: number): string {
  if (decimals === 0) return amount.toString();
  const digits = amount.toString().padStart(decimals + 1, "0");
  const whole = digits.slice(0, -decimals);
  const fraction = digits.slice(-decimals).replace(/0+$/, "");
  return fraction === "" ? whole : `${whole}.${fraction}`;
}

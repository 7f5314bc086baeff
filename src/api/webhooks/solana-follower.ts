import {
  createSolanaRpcFromTransport,
  isSolanaError,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_BLOCK_CLEANED_UP,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_LONG_TERM_STORAGE_SLOT_SKIPPED,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SLOT_SKIPPED,
  type Rpc,
  type RpcTransport,
  type SolanaRpcApi,
} from "@solana/kit";

import { AssetNotFoundError } from "../../chains/rpc/errors.ts";
import type { SolanaBalanceReader } from "../../chains/solana/balance-reader.ts";
import { ChainFollower, type ChainFollowerOptions, type Observation } from "./chain-follower.ts";
import type { WatchedPair } from "./watch-index.ts";

export interface SolanaFollowerOptions extends ChainFollowerOptions {
  /** The API's Solana source. */
  transport: RpcTransport;
  reader: SolanaBalanceReader;
}

/** A token balance entry of a transaction's meta (`preTokenBalances`, `postTokenBalances`). */
interface TokenBalance {
  mint: string;
  owner?: string;
}

interface BlockAnswer {
  transactions?: ReadonlyArray<{
    meta: { err: unknown; preTokenBalances?: readonly TokenBalance[]; postTokenBalances?: readonly TokenBalance[] } | null;
  }>;
}

/**
 * Follows Solana's finalized blocks (ChainFollower: one leader, one transaction per slot). Each block's
 * transactions carry the token balances of their accounts before and after (`getBlock` with
 * `transactionDetails: "accounts"`): every token account a transaction touched, with its owner and mint, new
 * accounts included. A touched watched pair is read at that slot or later (`minContextSlot`: Solana serves no
 * past state) and recorded when its balance changed, with the slot the read answered from.
 *
 * Why blocks rather than reading every watched account each slot: the cost follows the chain's traffic, not the
 * number of pairs watched (100,000 pairs would be 1,000 `getMultipleAccounts` a slot), and a new token account of
 * a watched owner is found in the block that created it, whatever its address. Finalized blocks are not rolled
 * back, so no correction is ever needed on Solana.
 */
export class SolanaFollower extends ChainFollower {
  readonly #rpc: Rpc<SolanaRpcApi>;
  readonly #reader: SolanaBalanceReader;

  constructor(options: SolanaFollowerOptions) {
    super("solana", options);
    this.#rpc = createSolanaRpcFromTransport(options.transport);
    this.#reader = options.reader;
  }

  protected async advance(): Promise<void> {
    const head = await this.#rpc.getSlot({ commitment: "finalized" }).send();
    // The first position ever: subscriptions made before it are compared there with their 201's balance.
    if (this.cursor === undefined) return this.record(head, "", await this.#read(this.catchUpPairs(), head));
    const from = this.cursor.block + 1n;
    if (head < from) return;
    const end = head < from + BigInt(this.maxPerPass) ? head : from + BigInt(this.maxPerPass) - 1n;
    const slots = await this.#rpc.getBlocks(from, end, { commitment: "finalized" }).send();
    for (const slot of slots) await this.#follow(slot);
    // The slots without a block: nothing happened there.
    if (this.cursor.block < end) await this.record(end, "", await this.#read(this.catchUpPairs(), end));
  }

  async #follow(slot: bigint): Promise<void> {
    const touched = new Set<WatchedPair>(this.catchUpPairs());
    if (this.index.pairCount > 0) for (const pair of await this.#touchedIn(slot)) touched.add(pair);
    await this.record(slot, "", await this.#read([...touched], slot));
  }

  /** The watched pairs whose token accounts the block's successful transactions touched. */
  async #touchedIn(slot: bigint): Promise<Set<WatchedPair>> {
    let block: BlockAnswer | null;
    try {
      block = await this.#rpc
        .getBlock(slot, { commitment: "finalized", transactionDetails: "accounts", rewards: false, maxSupportedTransactionVersion: 0 })
        .send();
    } catch (error) {
      // Skipped, or pruned from this node's ledger: a slot whose block nobody serves changed nothing we can see.
      if (
        isSolanaError(error, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SLOT_SKIPPED) ||
        isSolanaError(error, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_LONG_TERM_STORAGE_SLOT_SKIPPED) ||
        isSolanaError(error, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_BLOCK_CLEANED_UP)
      )
        return new Set();
      throw error;
    }
    const touched = new Set<WatchedPair>();
    for (const transaction of block?.transactions ?? []) {
      const meta = transaction.meta;
      if (meta === null || meta.err !== null) continue; // a failed transaction moves no token
      for (const entry of [...(meta.preTokenBalances ?? []), ...(meta.postTokenBalances ?? [])]) {
        if (entry.owner === undefined) continue;
        const pair = this.index.get(entry.owner, entry.mint, "");
        if (pair !== undefined) touched.add(pair);
      }
    }
    return touched;
  }

  /** The balances of `pairs` at `slot` or later; a pair whose mint is gone is left out. */
  async #read(pairs: readonly WatchedPair[], slot: bigint): Promise<Observation[]> {
    const read = await Promise.all(
      pairs.map(async (pair): Promise<Observation | undefined> => {
        try {
          const answer = await this.#reader.balanceOf(pair.owner, pair.asset, { minContextSlot: slot });
          return { pair, balance: answer.balance, block: answer.slot, correction: false };
        } catch (error) {
          if (!(error instanceof AssetNotFoundError)) throw error;
          this.options.onUnreadable?.(pair, error);
          return undefined;
        }
      }),
    );
    return read.filter((entry) => entry !== undefined);
  }
}

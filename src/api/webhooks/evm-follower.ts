import { toQuantity } from "ethers";

import type { EvmBalanceReader } from "../../chains/evm/balance-reader.ts";
import { AssetNotFoundError } from "../../chains/rpc/errors.ts";
import { ChainFollower, type ChainFollowerOptions, type Observation } from "./chain-follower.ts";
import { HOLDING_TOPICS, touchedBy, type RpcLog } from "./transfer-logs.ts";
import type { WatchedPair } from "./watch-index.ts";

/** The JSON-RPC calls the follower makes (a JsonRpcPool). */
export interface EvmRpc {
  request<T>(method: string, params: unknown[]): Promise<T>;
}

interface RpcBlock {
  number: string;
  hash: string;
  parentHash: string;
}

export interface EvmFollowerOptions extends ChainFollowerOptions {
  rpc: EvmRpc;
  /** Reads balances at a given block (its own EvmBalanceReader, over the same pool). */
  reader: EvmBalanceReader;
}

/** Most contracts named in one `eth_getLogs` filter; beyond it every transfer of the block is read and sorted here. */
const MAX_FILTER_ADDRESSES = 1_000;

/**
 * Follows Ethereum block by block from the head (ChainFollower: one leader, one transaction per block) and records,
 * for every watched pair a transfer log touched, the balance read at that block when it changed.
 *
 * Reorgs: each block's parent hash is checked against the hash recorded for the block before. When they
 * differ, the common ancestor is found among the recent hashes, the pairs recorded after it are read again on
 * the winning chain, and a balance that differs from the one delivered is delivered as a correction.
 */
export class EvmFollower extends ChainFollower {
  readonly #rpc: EvmRpc;
  readonly #reader: EvmBalanceReader;
  /** Pairs to read again after a reorg. */
  readonly #suspects = new Set<WatchedPair>();

  constructor(options: EvmFollowerOptions) {
    super("ethereum", options);
    this.#rpc = options.rpc;
    this.#reader = options.reader;
  }

  protected override forget(): void {
    super.forget();
    this.#suspects.clear();
  }

  protected async advance(): Promise<void> {
    const head = BigInt(await this.#rpc.request<string>("eth_blockNumber", []));
    if (this.cursor === undefined) {
      // The first pass ever starts at the head: subscriptions cover what comes after their 201.
      // Subscriptions made before it are compared there with their 201's balance.
      const block = await this.#block(head);
      if (block !== undefined) await this.record(head, block.hash, await this.#read(this.catchUpPairs(), head));
      return;
    }
    const last = this.cursor.block + BigInt(this.maxPerPass);
    while (this.cursor.block < head && this.cursor.block < last) {
      if (!(await this.#follow(this.cursor.block + 1n))) break;
    }
  }

  async #block(number: bigint): Promise<RpcBlock | undefined> {
    return (await this.#rpc.request<RpcBlock | null>("eth_getBlockByNumber", [toQuantity(number), false])) ?? undefined;
  }

  /** Records block `number`, or rewinds to a reorg's ancestor; false when there is nothing to record yet. */
  async #follow(number: bigint): Promise<boolean> {
    const cursor = this.cursor!;
    const block = await this.#block(number);
    if (block === undefined) return false;
    const [, lastHash] = cursor.recent[cursor.recent.length - 1];
    if (block.parentHash.toLowerCase() !== lastHash.toLowerCase()) {
      // A rewind that moved nothing (the source's nodes disagree for a moment) ends the pass: tried again next.
      return this.#rewind();
    }
    const touched = new Set<WatchedPair>([...this.#suspects, ...this.catchUpPairs()]);
    if (this.index.pairCount > 0) for (const pair of await this.#touchedIn(block)) touched.add(pair);
    const observations = await this.#read([...touched], number);
    await this.record(number, block.hash, observations);
    this.#suspects.clear();
    return true;
  }

  /** The watched pairs the block's transfer logs touched (the logs of that very block, by its hash). */
  async #touchedIn(block: RpcBlock): Promise<Set<WatchedPair>> {
    const assets = this.index.assets;
    const filter: Record<string, unknown> = { blockHash: block.hash, topics: [HOLDING_TOPICS] };
    if (assets.length <= MAX_FILTER_ADDRESSES) filter.address = assets;
    const logs = await this.#rpc.request<RpcLog[]>("eth_getLogs", [filter]);
    const touched = new Set<WatchedPair>();
    for (const log of logs) {
      const holding = touchedBy(log);
      if (holding !== undefined) for (const pair of this.index.touched(holding)) touched.add(pair);
    }
    return touched;
  }

  /** The balances of `pairs` at block `number`; a pair whose contract no longer answers is left out. */
  async #read(pairs: readonly WatchedPair[], number: bigint): Promise<Observation[]> {
    const read = await Promise.all(
      pairs.map(async (pair): Promise<Observation | undefined> => {
        try {
          const tokenId = pair.tokenId === "" ? undefined : BigInt(pair.tokenId);
          const { balance } = await this.#reader.balanceOf(pair.asset, pair.owner, number, tokenId);
          return { pair, balance, block: number, correction: this.#suspects.has(pair) };
        } catch (error) {
          // Any other failure (the source down) stops the pass: the block is followed again, nothing is lost.
          if (!(error instanceof AssetNotFoundError)) throw error;
          this.options.onUnreadable?.(pair, error);
          return undefined;
        }
      }),
    );
    return read.filter((entry) => entry !== undefined);
  }

  /**
   * The block's parent is not the block recorded before it: a reorg. Walks the recent hashes back to the last
   * one still on the chain, makes it the cursor, and marks the pairs recorded after it to be read again. False
   * when every recent hash is still on the chain (nodes behind one URL disagreeing for a moment): nothing moved.
   */
  async #rewind(): Promise<boolean> {
    const cursor = this.cursor!;
    let kept = 0;
    for (let index = cursor.recent.length - 1; index >= 0; index--) {
      const [number, hash] = cursor.recent[index];
      const canonical = await this.#block(number);
      if (canonical !== undefined && canonical.hash.toLowerCase() === hash.toLowerCase()) {
        kept = index + 1;
        break;
      }
    }
    if (kept === cursor.recent.length) return false;
    if (kept > 0) {
      const recent = cursor.recent.slice(0, kept);
      const ancestor = recent[recent.length - 1][0];
      this.#suspect((block) => block > ancestor);
      this.cursor = { ...cursor, block: ancestor, recent };
      return true;
    }
    // Deeper than the hashes kept: the oldest one, as the chain has it now, is the new start, and every pair
    // recorded at it or after is read again.
    const [oldestNumber] = cursor.recent[0];
    const oldest = await this.#block(oldestNumber);
    if (oldest === undefined) return false;
    this.#suspect((block) => block >= oldestNumber);
    this.cursor = { ...cursor, block: oldestNumber, recent: [[oldestNumber, oldest.hash]] };
    return true;
  }

  #suspect(recordedAt: (block: bigint) => boolean): void {
    for (const pair of this.index.pairs()) if (pair.recorded !== undefined && recordedAt(pair.recorded.block)) this.#suspects.add(pair);
  }
}

import { toQuantity } from "ethers";

import type { EvmBalanceReader } from "../../chains/evm/balance-reader.ts";
import { AssetNotFoundError } from "../../chains/rpc/errors.ts";
import { deliveryPayload } from "./delivery-payload.ts";
import { LeadershipLostError, newDeliveryId, type FollowerCursor, type FollowerStore, type RecordedChange } from "./follower-store.ts";
import type { Subscription, SubscriptionStore } from "./subscription-store.ts";
import { HOLDING_TOPICS, touchedBy, type RpcLog } from "./transfer-logs.ts";
import { WatchIndex, type PairState, type WatchedPair } from "./watch-index.ts";

const CHAIN = "ethereum";

/** The JSON-RPC calls the follower makes (a JsonRpcPool). */
export interface EvmRpc {
  request<T>(method: string, params: unknown[]): Promise<T>;
}

interface RpcBlock {
  number: string;
  hash: string;
  parentHash: string;
}

export interface EvmFollowerOptions {
  rpc: EvmRpc;
  /** Reads balances at a given block (its own EvmBalanceReader, over the same pool). */
  reader: EvmBalanceReader;
  store: FollowerStore;
  subscriptions: SubscriptionStore;
  /** This process's name in the leader lease. */
  owner: string;
  leaseMs: number;
  /** Called once changes are recorded, so that the dispatcher sends them at once. */
  onRecorded: () => void;
  /** A pair whose balance could not be read (a contract that stopped answering): its change is not recorded. */
  onUnreadable?: (pair: WatchedPair, error: unknown) => void;
  /** Blocks recorded per pass at most, so a follower far behind still gives the dispatcher its changes soon. */
  maxBlocksPerPass?: number;
  /** Block hashes kept to find a reorg's common ancestor: the deepest reorg followed. */
  recentKept?: number;
  now?: () => number;
}

/** Most contracts named in one `eth_getLogs` filter; beyond it every transfer of the block is read and sorted here. */
const MAX_FILTER_ADDRESSES = 1_000;

/**
 * Follows Ethereum block by block from the head and records, for every watched pair a transfer log touched,
 * the balance read at that block when it changed: one transaction per block (changes, balances, cursor), so a
 * crash loses nothing and records nothing twice. Only the process holding the lead follows (FollowerStore).
 *
 * Reorgs: each block's parent hash is checked against the hash recorded for the block before. When they
 * differ, the common ancestor is found among the recent hashes, the pairs recorded after it are read again on
 * the winning chain, and a balance that differs from the one delivered is delivered as a correction.
 *
 * Subscriptions created while the follower runs are watched from the next block; one created at a block the
 * follower had already passed (its read raced a block) is compared once, at the next block, with the balance
 * it was created with, so no change after its 201 is missed.
 */
export class EvmFollower {
  readonly #options: EvmFollowerOptions;
  readonly #maxBlocks: number;
  readonly #recentKept: number;
  readonly #now: () => number;
  #index = new WatchIndex();
  #cursor: FollowerCursor | undefined;
  #revision = 0n;
  #loaded = false;
  #leading = false;
  #leadCheckedAt = 0;
  /** Subscriptions to compare with their baseline at the next block, and pairs to read again after a reorg. */
  #catchUp = new Map<string, Subscription>();
  #suspects = new Set<WatchedPair>();

  constructor(options: EvmFollowerOptions) {
    this.#options = options;
    this.#maxBlocks = options.maxBlocksPerPass ?? 32;
    this.#recentKept = options.recentKept ?? 64;
    this.#now = options.now ?? Date.now;
  }

  get pairCount(): number {
    return this.#index.pairCount;
  }

  /** The last block recorded, once this process leads. */
  get block(): bigint | undefined {
    return this.#cursor?.block;
  }

  /** One pass: lead (or not), load what changed, record the blocks up to the head. */
  async pass(): Promise<void> {
    try {
      if (!(await this.#lead())) return;
      await this.#load();
      const head = BigInt(await this.#options.rpc.request<string>("eth_blockNumber", []));
      if (this.#cursor === undefined) return await this.#start(head);
      const last = this.#cursor.block + BigInt(this.#maxBlocks);
      while (this.#cursor.block < head && this.#cursor.block < last) {
        const recorded = await this.#follow(this.#cursor.block + 1n);
        if (!recorded) break;
      }
    } catch (error) {
      if (error instanceof LeadershipLostError) return this.#forget();
      throw error;
    }
  }

  /** Gives the lead up on a clean stop. */
  async resign(): Promise<void> {
    await this.#options.store.resign(this.#options.owner);
    this.#forget();
    this.#leadCheckedAt = 0;
  }

  async #lead(): Promise<boolean> {
    const nowMs = this.#now();
    // Every recorded block renews the lease too; an idle leader renews it a third of the way through, and a
    // process that does not lead asks as often, so a dead leader's lease is taken soon after it runs out.
    if (nowMs - this.#leadCheckedAt < this.#options.leaseMs / 3) return this.#leading;
    const leading = await this.#options.store.lead(this.#options.owner, this.#options.leaseMs, nowMs);
    this.#leadCheckedAt = nowMs;
    if (!leading) this.#forget();
    this.#leading = leading;
    return leading;
  }

  /** Another process may record blocks while this one does not lead: start again from the store. */
  #forget(): void {
    this.#leading = false;
    this.#loaded = false;
    this.#index = new WatchIndex();
    this.#cursor = undefined;
    this.#catchUp.clear();
    this.#suspects.clear();
  }

  async #load(): Promise<void> {
    const { store, subscriptions } = this.#options;
    if (!this.#loaded) {
      this.#cursor = await store.cursor(CHAIN);
      const stored = new Map((await store.pairs(CHAIN)).map((pair) => [`${pair.asset}|${pair.owner}|${pair.tokenId}`, pair]));
      this.#revision = this.#cursor?.revision ?? 0n;
      const all = await subscriptions.changedSince(0n);
      for (const subscription of all.subscriptions) {
        if (subscription.chain !== CHAIN) continue;
        this.#index.apply(subscription, stored.get(`${subscription.asset}|${subscription.owner}|${subscription.tokenId}`));
        this.#noteIfLate(subscription);
      }
      this.#revision = all.revision;
      this.#loaded = true;
      return;
    }
    const changed = await subscriptions.changedSince(this.#revision);
    for (const subscription of changed.subscriptions) {
      if (subscription.chain !== CHAIN) continue;
      this.#index.apply(subscription);
      if (subscription.state === "deleted") this.#catchUp.delete(subscription.id);
      else this.#noteIfLate(subscription);
    }
    this.#revision = changed.revision;
  }

  /** A subscription the recorded blocks did not watch, created before the last of them: compared at the next block. */
  #noteIfLate(subscription: Subscription): void {
    const cursor = this.#cursor;
    if (cursor === undefined || subscription.state === "deleted") return;
    if (subscription.changeSeq > cursor.revision && subscription.baselineBlock < cursor.block)
      this.#catchUp.set(subscription.id, subscription);
  }

  /** The first pass ever: the follower starts at the head (subscriptions cover what comes after their 201). */
  async #start(head: bigint): Promise<void> {
    const block = await this.#block(head);
    if (block === undefined) return;
    const cursor: FollowerCursor = { block: head, recent: [[head, block.hash]], revision: this.#revision };
    await this.#options.store.record(CHAIN, this.#options.owner, this.#options.leaseMs, { cursor, pairs: [], changes: [] }, this.#now());
    this.#cursor = cursor;
  }

  async #block(number: bigint): Promise<RpcBlock | undefined> {
    return (await this.#options.rpc.request<RpcBlock | null>("eth_getBlockByNumber", [toQuantity(number), false])) ?? undefined;
  }

  /** Records block `number`, or rewinds to a reorg's ancestor; false when there is nothing to record yet. */
  async #follow(number: bigint): Promise<boolean> {
    const cursor = this.#cursor as FollowerCursor;
    const block = await this.#block(number);
    if (block === undefined) return false;
    const [, lastHash] = cursor.recent[cursor.recent.length - 1];
    if (block.parentHash.toLowerCase() !== lastHash.toLowerCase()) {
      await this.#rewind();
      return true;
    }
    const touched = new Set<WatchedPair>(this.#suspects);
    for (const subscription of this.#catchUp.values()) {
      const pair = this.#index.get(subscription.owner, subscription.asset, subscription.tokenId);
      if (pair !== undefined) touched.add(pair);
    }
    if (this.#index.pairCount > 0) for (const pair of await this.#touchedIn(block)) touched.add(pair);
    const balances = await this.#read([...touched], number);
    const changes: RecordedChange[] = [];
    const pairs: PairState[] = [];
    const observedAt = new Date(this.#now()).toISOString();
    for (const [pair, balance] of balances) {
      const correction = this.#suspects.has(pair);
      // A pair created ahead of the follower (its 201 read a later block) is not covered before that block.
      if (!correction && number <= pair.block && ![...pair.subscriptions.keys()].some((id) => this.#catchUp.has(id))) continue;
      for (const subscription of pair.subscriptions.values()) {
        const late = this.#catchUp.has(subscription.id);
        if (!late && number <= subscription.baselineBlock) continue;
        const previous = late ? subscription.baselineBalance : pair.balance;
        if (balance === previous) continue;
        const id = newDeliveryId();
        const payload = deliveryPayload({
          id,
          subscription,
          balance,
          previousBalance: previous,
          block: number,
          blockHash: block.hash,
          correction,
          observedAt,
        });
        changes.push({ id, subscriptionId: subscription.id, payload, observedAt });
      }
      if (balance !== pair.balance || number > pair.block) pairs.push({ ...pair, balance, block: number });
    }
    const next: FollowerCursor = {
      block: number,
      recent: [...cursor.recent, [number, block.hash] as [bigint, string]].slice(-this.#recentKept),
      revision: this.#revision,
    };
    await this.#options.store.record(CHAIN, this.#options.owner, this.#options.leaseMs, { cursor: next, pairs, changes }, this.#now());
    this.#leadCheckedAt = this.#now();
    // Memory follows the store only once the block is recorded.
    for (const state of pairs) {
      const pair = this.#index.get(state.owner, state.asset, state.tokenId);
      if (pair !== undefined) Object.assign(pair, { balance: state.balance, block: state.block });
    }
    this.#cursor = next;
    this.#catchUp.clear();
    this.#suspects.clear();
    if (changes.length > 0) this.#options.onRecorded();
    return true;
  }

  /** The watched pairs the block's transfer logs touched (the logs of that very block, by its hash). */
  async #touchedIn(block: RpcBlock): Promise<Set<WatchedPair>> {
    const assets = this.#index.assets;
    const filter: Record<string, unknown> = { blockHash: block.hash, topics: [HOLDING_TOPICS] };
    if (assets.length <= MAX_FILTER_ADDRESSES) filter.address = assets;
    const logs = await this.#options.rpc.request<RpcLog[]>("eth_getLogs", [filter]);
    const touched = new Set<WatchedPair>();
    for (const log of logs) {
      const holding = touchedBy(log);
      if (holding !== undefined) for (const pair of this.#index.touched(holding)) touched.add(pair);
    }
    return touched;
  }

  /** The balances of `pairs` at block `number`; a pair whose contract no longer answers is left out. */
  async #read(pairs: readonly WatchedPair[], number: bigint): Promise<Map<WatchedPair, bigint>> {
    const read = await Promise.all(
      pairs.map(async (pair): Promise<[WatchedPair, bigint] | undefined> => {
        try {
          const tokenId = pair.tokenId === "" ? undefined : BigInt(pair.tokenId);
          const { balance } = await this.#options.reader.balanceOf(pair.asset, pair.owner, number, tokenId);
          return [pair, balance];
        } catch (error) {
          // Any other failure (the source down) stops the pass: the block is followed again, nothing is lost.
          if (!(error instanceof AssetNotFoundError)) throw error;
          this.#options.onUnreadable?.(pair, error);
          return undefined;
        }
      }),
    );
    return new Map(read.filter((entry) => entry !== undefined));
  }

  /**
   * The block's parent is not the block recorded before it: a reorg. Walks the recent hashes back to the last
   * one still on the chain, makes it the cursor, and marks the pairs recorded after it to be read again.
   */
  async #rewind(): Promise<void> {
    const cursor = this.#cursor as FollowerCursor;
    let kept = 0;
    for (let index = cursor.recent.length - 1; index >= 0; index--) {
      const [number, hash] = cursor.recent[index];
      const canonical = await this.#block(number);
      if (canonical !== undefined && canonical.hash.toLowerCase() === hash.toLowerCase()) {
        kept = index + 1;
        break;
      }
    }
    // Deeper than the hashes kept: start again from the oldest one, reading every pair recorded after it.
    const recent = kept === 0 ? cursor.recent.slice(0, 1) : cursor.recent.slice(0, kept);
    const ancestor = recent[recent.length - 1][0];
    if (kept === 0) {
      const oldest = await this.#block(ancestor);
      if (oldest !== undefined) recent[0] = [ancestor, oldest.hash];
    }
    for (const pair of this.#index.pairs()) if (pair.block > ancestor) this.#suspects.add(pair);
    this.#cursor = { ...cursor, block: ancestor, recent };
  }
}

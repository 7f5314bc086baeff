import type { WebhookChain } from "@avn/protocol/webhook-wire";
import { deliveryPayload } from "./delivery-payload.ts";
import { LeadershipLostError, newDeliveryId, type FollowerCursor, type FollowerStore, type RecordedChange } from "./follower-store.ts";
import type { Subscription, SubscriptionStore } from "./subscription-store.ts";
import { pairKey, WatchIndex, type PairState, type WatchedPair } from "./watch-index.ts";

export interface ChainFollowerOptions {
  store: FollowerStore;
  subscriptions: SubscriptionStore;
  /** This process's name in the leader lease. */
  owner: string;
  leaseMs: number;
  /** Called once changes are recorded, so that the dispatcher sends them at once. */
  onRecorded: () => void;
  /** A pair whose balance could not be read (a token that stopped answering): its change is not recorded. */
  onUnreadable?: (pair: WatchedPair, error: unknown) => void;
  /** Blocks or slots recorded per pass at most, so a follower far behind still gives the dispatcher its changes soon. */
  maxPerPass?: number;
  now?: () => number;
}

/** A balance read of a pair, at the block or slot the read answered from. */
export interface Observation {
  pair: WatchedPair;
  balance: bigint;
  block: bigint;
  /** Read again after a reorg undid what was recorded: a difference is delivered as a correction. */
  correction: boolean;
}

/**
 * What the Ethereum and the Solana followers share: only the process holding the lead follows (FollowerStore), it
 * loads the subscriptions and the pairs' last balances from the key database and then what changed since, and it
 * records each block or slot (its changes, the pairs' balances, the cursor) in one transaction, so a crash loses
 * nothing and records nothing twice. Memory follows the store only once a position is recorded.
 *
 * A subscription created while the follower runs is watched from the next position; one created at a position
 * the follower had already passed (its read raced a block) is compared once, at the next position, with the
 * balance it was created with, so no change after its 201 is missed.
 */
export abstract class ChainFollower {
  readonly chain: WebhookChain;
  protected readonly options: ChainFollowerOptions;
  protected readonly maxPerPass: number;
  protected readonly now: () => number;
  protected index = new WatchIndex();
  protected cursor: FollowerCursor | undefined;
  /** Subscriptions compared with their baseline at the next position. */
  protected readonly catchUp = new Map<string, Subscription>();
  #revision = 0n;
  #loaded = false;
  #leading = false;
  /** The lead's epoch this process loaded under: a record under an older one is refused by the store. */
  #epoch: bigint | undefined;
  #leadCheckedAt = 0;

  constructor(chain: WebhookChain, options: ChainFollowerOptions) {
    this.chain = chain;
    this.options = options;
    this.maxPerPass = options.maxPerPass ?? 32;
    this.now = options.now ?? Date.now;
  }

  get pairCount(): number {
    return this.index.pairCount;
  }

  /** The last block or slot recorded, once this process leads. */
  get block(): bigint | undefined {
    return this.cursor?.block;
  }

  /** One pass: lead (or not), load what changed, record the positions up to the head. */
  async pass(): Promise<void> {
    try {
      if (!(await this.#lead())) return;
      await this.#load();
      await this.advance();
    } catch (error) {
      if (error instanceof LeadershipLostError) return this.forget();
      throw error;
    }
  }

  /** Gives the lead up on a clean stop. */
  async resign(): Promise<void> {
    await this.options.store.resign(this.options.owner);
    this.forget();
    this.#leadCheckedAt = 0;
  }

  /** Records the positions from the cursor towards the head (at most `maxPerPass`). */
  protected abstract advance(): Promise<void>;

  /** Forgets what memory holds of the chain: another process may record positions while this one does not lead. */
  protected forget(): void {
    this.#leading = false;
    this.#loaded = false;
    this.index = new WatchIndex();
    this.cursor = undefined;
    this.catchUp.clear();
  }

  /** The pairs to read at the next position whatever it holds: the late subscriptions', each once. */
  protected catchUpPairs(): WatchedPair[] {
    const pairs = new Set<WatchedPair>();
    for (const subscription of this.catchUp.values()) {
      const pair = this.index.get(subscription.owner, subscription.asset, subscription.tokenId);
      if (pair !== undefined) pairs.add(pair);
    }
    return [...pairs];
  }

  /**
   * What `subscription` knows of its pair: the balance it was created with, or the pair's recorded balance once
   * that was read after it (a late subscription was never told the recorded one, so its baseline stands).
   */
  #known(pair: WatchedPair, subscription: Subscription): { balance: bigint; block: bigint } {
    const recorded = pair.recorded;
    if (recorded === undefined || recorded.block <= subscription.baselineBlock || this.catchUp.has(subscription.id))
      return { balance: subscription.baselineBalance, block: subscription.baselineBlock };
    return recorded;
  }

  /**
   * Records `position` (its hash for a reorg-aware chain): for each subscription of an observed pair, a change
   * when the observation was read after what the subscription knows (its 201's read, or the pair's last
   * recorded balance) and differs from it, or when it corrects a balance a reorg undid; the pairs' balances;
   * and the cursor. Coverage is decided per subscription by the observation's own block or slot, so a
   * subscription created between two reads of its pair gets the change after its 201, whichever came first.
   */
  protected async record(position: bigint, hash: string, observations: readonly Observation[]): Promise<void> {
    const changes: RecordedChange[] = [];
    const pairs: PairState[] = [];
    const observedAt = new Date(this.now()).toISOString();
    for (const { pair, balance, block, correction } of observations) {
      for (const subscription of pair.subscriptions.values()) {
        const known = this.#known(pair, subscription);
        if ((block <= known.block && !correction) || balance === known.balance) continue;
        const previous = known.balance;
        const id = newDeliveryId();
        const payload = deliveryPayload({
          id,
          subscription,
          balance,
          previousBalance: previous,
          block,
          blockHash: this.chain === "ethereum" ? hash : undefined,
          correction,
          observedAt,
        });
        changes.push({ id, subscriptionId: subscription.id, payload, observedAt });
      }
      // A read older than the recorded one (a pair read again in the same pass) does not take its place.
      if (pair.recorded === undefined || block > pair.recorded.block || correction)
        pairs.push({ owner: pair.owner, asset: pair.asset, tokenId: pair.tokenId, balance, block });
    }
    const recent = this.cursor?.recent ?? [];
    const cursor: FollowerCursor = {
      block: position,
      recent: [...recent, [position, hash] as [bigint, string]].slice(-RECENT_KEPT),
      revision: this.#revision,
    };
    await this.options.store.record(
      this.chain,
      this.options.owner,
      this.#epoch,
      this.options.leaseMs,
      { cursor, pairs, changes },
      this.now(),
    );
    this.#leadCheckedAt = this.now(); // the record renewed the lease
    for (const state of pairs) {
      const pair = this.index.get(state.owner, state.asset, state.tokenId);
      if (pair !== undefined) pair.recorded = { balance: state.balance, block: state.block };
    }
    this.cursor = cursor;
    // A late subscription whose pair could not be read stays late: it is compared at the next position.
    for (const { pair } of observations) for (const id of pair.subscriptions.keys()) this.catchUp.delete(id);
    if (changes.length > 0) this.options.onRecorded();
  }

  async #lead(): Promise<boolean> {
    const nowMs = this.now();
    // Every record renews the lease too; an idle leader renews it a third of the way through, and a process that
    // does not lead asks as often, so a dead leader's lease is taken soon after it runs out.
    if (nowMs - this.#leadCheckedAt < this.options.leaseMs / 3) return this.#leading;
    const lead = await this.options.store.lead(this.options.owner, this.options.leaseMs, nowMs);
    this.#leadCheckedAt = nowMs;
    // Not leading, or leading again after another process did (a new epoch): what memory holds may be behind the
    // store, so it is loaded again. A process that paused past its lease while nobody took it goes on.
    if (lead === undefined || lead.epoch !== this.#epoch) this.forget();
    this.#epoch = lead?.epoch;
    this.#leading = lead !== undefined;
    return this.#leading;
  }

  async #load(): Promise<void> {
    const { store, subscriptions } = this.options;
    if (!this.#loaded) {
      this.cursor = await store.cursor(this.chain);
      const stored = new Map((await store.pairs(this.chain)).map((pair) => [pairKey(pair.owner, pair.asset, pair.tokenId), pair]));
      const all = await subscriptions.changedSince(0n);
      for (const subscription of all.subscriptions) {
        if (subscription.chain !== this.chain) continue;
        this.index.apply(subscription, stored.get(pairKey(subscription.owner, subscription.asset, subscription.tokenId)));
        this.#noteIfLate(subscription);
      }
      this.#revision = all.revision;
      this.#loaded = true;
      return;
    }
    const changed = await subscriptions.changedSince(this.#revision);
    for (const subscription of changed.subscriptions) {
      if (subscription.chain !== this.chain) continue;
      this.index.apply(subscription);
      if (subscription.state === "deleted") this.catchUp.delete(subscription.id);
      else this.#noteIfLate(subscription);
    }
    this.#revision = changed.revision;
  }

  /** A subscription the recorded positions did not watch, created before the last of them: compared at the next one. */
  #noteIfLate(subscription: Subscription): void {
    const cursor = this.cursor;
    if (subscription.state === "deleted") return;
    // Before the first position is recorded, every subscription is compared at it with its 201's balance.
    if (cursor === undefined || (subscription.changeSeq > cursor.revision && subscription.baselineBlock < cursor.block))
      this.catchUp.set(subscription.id, subscription);
  }
}

/** Block hashes kept to find a reorg's common ancestor: the deepest reorg followed. */
export const RECENT_KEPT = 64;

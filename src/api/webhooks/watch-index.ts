import type { Subscription } from "./subscription-store.ts";
import type { TouchedHolding } from "./transfer-logs.ts";

/** One watched holding (owner, asset, token id) and the last balance recorded of it. */
export interface WatchedPair {
  key: string;
  owner: string;
  asset: string;
  /** The ERC-1155 id in decimal, '' for none. */
  tokenId: string;
  /**
   * The last balance the follower recorded of it and the block or slot it was read at; undefined until the
   * follower first reads it (each subscription then knows only the balance it was created with).
   */
  recorded: { balance: bigint; block: bigint } | undefined;
  /** Its live subscriptions by id (failing ones too: their changes are recorded, and sent once replayed). */
  subscriptions: Map<string, Subscription>;
}

/** The stored state of a pair, as the follower records it. */
export interface PairState {
  owner: string;
  asset: string;
  tokenId: string;
  balance: bigint;
  block: bigint;
}

export const pairKey = (owner: string, asset: string, tokenId: string) => `${asset}|${owner}|${tokenId}`;

/**
 * The watched pairs of one chain in memory, as the follower needs them: found by the contract and the owner a
 * log names, in constant time whatever their number. Subscriptions come and go through `apply`; a pair lives
 * while a subscription watches it.
 */
export class WatchIndex {
  readonly #pairs = new Map<string, WatchedPair>();
  /** asset → owner → the pairs of that owner in that contract (one per token id). */
  readonly #byAsset = new Map<string, Map<string, WatchedPair[]>>();

  get pairCount(): number {
    return this.#pairs.size;
  }

  get assets(): string[] {
    return [...this.#byAsset.keys()];
  }

  pairs(): IterableIterator<WatchedPair> {
    return this.#pairs.values();
  }

  /**
   * Adds, updates or (deleted) removes a subscription. A new pair starts from `stored` when the follower
   * recorded it before. Returns the pair, or undefined once removed.
   */
  apply(subscription: Subscription, stored?: PairState): WatchedPair | undefined {
    const key = pairKey(subscription.owner, subscription.asset, subscription.tokenId);
    let pair = this.#pairs.get(key);
    if (subscription.state === "deleted") {
      if (pair === undefined) return undefined;
      pair.subscriptions.delete(subscription.id);
      if (pair.subscriptions.size === 0) this.#remove(pair);
      return undefined;
    }
    if (pair === undefined) {
      pair = {
        key,
        owner: subscription.owner,
        asset: subscription.asset,
        tokenId: subscription.tokenId,
        recorded: stored === undefined ? undefined : { balance: stored.balance, block: stored.block },
        subscriptions: new Map(),
      };
      this.#pairs.set(key, pair);
      const owners = this.#byAsset.get(pair.asset) ?? new Map<string, WatchedPair[]>();
      this.#byAsset.set(pair.asset, owners);
      owners.set(pair.owner, [...(owners.get(pair.owner) ?? []), pair]);
    }
    pair.subscriptions.set(subscription.id, subscription);
    return pair;
  }

  get(owner: string, asset: string, tokenId: string): WatchedPair | undefined {
    return this.#pairs.get(pairKey(owner, asset, tokenId));
  }

  /** The watched pairs a transfer may have changed. */
  touched(holding: TouchedHolding): WatchedPair[] {
    const owners = this.#byAsset.get(holding.asset);
    if (owners === undefined) return [];
    const found: WatchedPair[] = [];
    for (const owner of holding.owners) {
      for (const pair of owners.get(owner) ?? []) {
        // A Transfer changes the contract's plain balanceOf; an ERC-1155 transfer the ids it names.
        const matches =
          holding.tokenIds === undefined ? true : pair.tokenId !== "" && holding.tokenIds.some((id) => id.toString() === pair.tokenId);
        if (matches && !found.includes(pair)) found.push(pair);
      }
    }
    return found;
  }

  #remove(pair: WatchedPair): void {
    this.#pairs.delete(pair.key);
    const owners = this.#byAsset.get(pair.asset);
    const left = owners?.get(pair.owner)?.filter((other) => other !== pair) ?? [];
    if (left.length > 0) owners?.set(pair.owner, left);
    else owners?.delete(pair.owner);
    if (owners?.size === 0) this.#byAsset.delete(pair.asset);
  }
}

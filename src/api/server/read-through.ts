import type { ApiMetrics } from "../metrics.ts";
import { ResultCache } from "../result-cache.ts";

/**
 * One chain's answers, cached by the position (block, slot) they were read at: an answer is reused only
 * while the chain stands still.
 */
export class ReadThroughCache<T> {
  readonly #cache: ResultCache<T>;
  readonly #chain: string;
  readonly #metrics: ApiMetrics;
  readonly #positionOf: (value: T) => bigint;
  readonly #generation: () => number;

  /**
   * `generation` (default: always 0) changes when the chain's history did (a reorg): answers read before
   * are then never reused, even at a position with the same number.
   */
  constructor(chain: string, ttlMs: number, metrics: ApiMetrics, positionOf: (value: T) => bigint, generation: () => number = () => 0) {
    this.#cache = new ResultCache<T>(ttlMs);
    this.#chain = chain;
    this.#metrics = metrics;
    this.#positionOf = positionOf;
    this.#generation = generation;
  }

  /** The answer to `query` cached at `head`, or a fresh read, stored under the position it was read at. */
  async get(head: bigint, query: string, read: () => Promise<T>): Promise<T> {
    const generation = this.#generation();
    const cached = this.#cache.get(`${generation}:${head}:${query}`);
    this.#metrics.recordCacheLookup(this.#chain, cached !== undefined);
    if (cached !== undefined) return cached;
    const value = await read();
    // Kept only if no reorg was seen while it was read: it may be of the replaced branch.
    if (this.#generation() === generation) this.#cache.set(`${generation}:${this.#positionOf(value)}:${query}`, value);
    return value;
  }
}

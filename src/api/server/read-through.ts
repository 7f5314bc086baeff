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

  constructor(chain: string, ttlMs: number, metrics: ApiMetrics, positionOf: (value: T) => bigint) {
    this.#cache = new ResultCache<T>(ttlMs);
    this.#chain = chain;
    this.#metrics = metrics;
    this.#positionOf = positionOf;
  }

  /** The answer to `query` cached at `head`, or a fresh read, stored under the position it was read at. */
  async get(head: bigint, query: string, read: () => Promise<T>): Promise<T> {
    const cached = this.#cache.get(`${head}:${query}`);
    this.#metrics.recordCacheLookup(this.#chain, cached !== undefined);
    if (cached !== undefined) return cached;
    const value = await read();
    this.#cache.set(`${this.#positionOf(value)}:${query}`, value);
    return value;
  }
}

/**
 * A short-lived cache of balance answers. Keys carry the source position they were read at (block
 * number), so an answer is reused only while the chain has not moved, and for at most `ttlMs`.
 */
export class ResultCache<T> {
  readonly #entries = new Map<string, { value: T; expires: number }>();
  readonly #ttlMs: number;
  readonly #maxEntries: number;

  constructor(ttlMs: number, maxEntries = 10_000) {
    this.#ttlMs = ttlMs;
    this.#maxEntries = maxEntries;
  }

  get(key: string): T | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expires <= Date.now()) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  set(key: string, value: T): void {
    if (this.#ttlMs <= 0) return;
    if (this.#entries.size >= this.#maxEntries) {
      // Maps iterate in insertion order: drop the oldest entry.
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
    this.#entries.set(key, { value, expires: Date.now() + this.#ttlMs });
  }
}

/** How a client spreads attempts over several upstream URLs. */
export interface FailoverOptions {
  /** Upstream URLs, tried in order; a failing one is skipped for `cooldownMs`. */
  urls: readonly string[];
  /** Per-attempt timeout. */
  timeoutMs?: number;
  /** Attempts per request over all URLs (first try included). */
  maxAttempts?: number;
  /** Backoff before the n-th retry: `backoffMs * 2^(n-1)`. */
  backoffMs?: number;
  cooldownMs?: number;
  /** Counts every HTTP request sent upstream (metrics, benchmarks). */
  onUpstreamRequest?: (outcome: "ok" | "error") => void;
}

/**
 * Retries with exponential backoff and failover over several upstreams, for the EVM and the Solana
 * clients alike: each attempt goes to the first upstream not cooling down (rotating with the attempt
 * number, so a retry can land elsewhere), and an upstream that fails is cooled down.
 */
export class Failover {
  readonly timeoutMs: number;
  readonly maxAttempts: number;
  readonly #count: number;
  readonly #backoffMs: number;
  readonly #cooldownMs: number;
  readonly #coolingUntil: number[];

  constructor(options: FailoverOptions) {
    if (options.urls.length === 0) throw new Error("at least one upstream RPC URL is required");
    this.#count = options.urls.length;
    this.timeoutMs = options.timeoutMs ?? 5_000;
    this.maxAttempts = options.maxAttempts ?? Math.max(3, options.urls.length);
    this.#backoffMs = options.backoffMs ?? 100;
    this.#cooldownMs = options.cooldownMs ?? 10_000;
    this.#coolingUntil = options.urls.map(() => 0);
  }

  /**
   * Runs `attempt` on upstream after upstream until it succeeds, an error `isFinal` says no other
   * upstream could change (thrown at once), or the attempts run out (the last error is thrown).
   */
  async run<T>(attempt: (index: number) => Promise<T>, isFinal: (error: unknown) => boolean): Promise<T> {
    let lastError: unknown;
    for (let number = 0; number < this.maxAttempts; number += 1) {
      if (number > 0) await new Promise((resolve) => setTimeout(resolve, this.#backoffMs * 2 ** (number - 1)));
      const index = this.#pick(number);
      try {
        return await attempt(index);
      } catch (error) {
        if (isFinal(error)) throw error;
        lastError = error;
        this.#coolingUntil[index] = Date.now() + this.#cooldownMs;
      }
    }
    throw lastError;
  }

  #pick(attempt: number): number {
    const now = Date.now();
    for (let offset = 0; offset < this.#count; offset += 1) {
      const index = (attempt + offset) % this.#count;
      if (this.#coolingUntil[index] <= now) return index;
    }
    return attempt % this.#count; // all cooling down: try anyway, in turn
  }
}

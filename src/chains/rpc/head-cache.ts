/** How long the readers reuse the head unless told otherwise: the API asks for it at most once a second. */
export const DEFAULT_HEAD_TTL_MS = 1_000;

/**
 * The chain's latest position (EVM block number, Solana slot), asked upstream at most once per `ttlMs`
 * by the clock `now` (milliseconds; Date.now unless a test moves it); concurrent askers share one
 * request, and a failed request is not remembered.
 */
export class HeadCache {
  readonly #fetch: () => Promise<bigint>;
  readonly #ttlMs: number;
  readonly #now: () => number;
  #head: { value: bigint; at: number } | undefined;
  #pending: Promise<bigint> | undefined;

  constructor(fetch: () => Promise<bigint>, ttlMs: number, now: () => number = Date.now) {
    this.#fetch = fetch;
    this.#ttlMs = ttlMs;
    this.#now = now;
  }

  get(): Promise<bigint> {
    const head = this.#head;
    if (head !== undefined && this.#now() - head.at < this.#ttlMs) return Promise.resolve(head.value);
    this.#pending ??= this.#fetch()
      .then((value) => {
        this.#head = { value, at: this.#now() };
        return value;
      })
      .finally(() => {
        this.#pending = undefined;
      });
    return this.#pending;
  }
}

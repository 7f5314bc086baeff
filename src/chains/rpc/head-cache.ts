/**
 * The chain's latest position (EVM block number, Solana slot), asked upstream at most once per `ttlMs`;
 * concurrent askers share one request, and a failed request is not remembered.
 */
export class HeadCache {
  readonly #fetch: () => Promise<bigint>;
  readonly #ttlMs: number;
  #head: { value: bigint; at: number } | undefined;
  #pending: Promise<bigint> | undefined;

  constructor(fetch: () => Promise<bigint>, ttlMs: number) {
    this.#fetch = fetch;
    this.#ttlMs = ttlMs;
  }

  get(): Promise<bigint> {
    const head = this.#head;
    if (head !== undefined && Date.now() - head.at < this.#ttlMs) return Promise.resolve(head.value);
    this.#pending ??= this.#fetch()
      .then((value) => {
        this.#head = { value, at: Date.now() };
        return value;
      })
      .finally(() => {
        this.#pending = undefined;
      });
    return this.#pending;
  }
}

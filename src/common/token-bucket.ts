/**
 * A token bucket: `capacity` tokens, refilled at `perSecond` (bursts of up to `capacity`; with `perSecond`
 * and `capacity` 0, never a token). `now` is the clock in milliseconds (tests inject one).
 */
export class TokenBucket {
  readonly #capacity: number;
  readonly #perSecond: number;
  readonly #now: () => number;
  #tokens: number;
  #at: number;

  constructor(perSecond: number, capacity: number, now: () => number = () => performance.now()) {
    this.#perSecond = perSecond;
    this.#capacity = capacity;
    this.#now = now;
    this.#tokens = capacity;
    this.#at = now();
  }

  /** Takes `count` tokens when there are that many (then true); else takes none (false). */
  take(count = 1): boolean {
    const now = this.#now();
    this.#tokens = Math.min(this.#capacity, this.#tokens + ((now - this.#at) / 1000) * this.#perSecond);
    this.#at = now;
    if (this.#tokens < count) return false;
    this.#tokens -= count;
    return true;
  }
}

import { AvnError } from "@avn/protocol/errors";

/** The outcome of taking up to n tokens, with what the RateLimit headers need. */
export interface RateLimitDecision {
  /** Whether at least one token was granted (for a single request: whether it may proceed). */
  allowed: boolean;
  /** Tokens granted, from 0 to the number asked for: as many as the bucket held, never more. */
  granted: number;
  limit: number;
  /** Whole tokens left after this decision. */
  remaining: number;
  /**
   * Milliseconds until what was asked is available (0 when allowed): a token, or all `count` tokens for
   * an all-or-nothing take (for more than the bucket holds, until it is full: callers refuse such a count
   * before asking, since waiting cannot bring it).
   */
  retryAfterMs: number;
  /** Milliseconds until the bucket is full again. */
  resetMs: number;
}

export interface TokenBucketPolicy {
  /** Burst size: tokens in a full bucket. */
  capacity: number;
  /** Tokens added per second. */
  refillPerSecond: number;
}

/**
 * How a take of several tokens is granted: `upTo` as many as the bucket holds (a partial batch), `all`
 * every one of them or none (a batch admitted whole or refused whole).
 */
export type TakeMode = "upTo" | "all";

/**
 * The store could not be asked (Redis down, paused or too slow). Behind `FallbackRateLimitStore` (how the
 * API uses Redis) it never reaches a request: the take is served by per-process buckets instead. A store
 * used bare lets it through, and the API answers it 503 (`src/api/server/error-handling.ts`).
 */
export class RateLimitStoreError extends AvnError<"RATE_LIMIT_STORE_UNAVAILABLE"> {
  override name = "RateLimitStoreError";

  constructor(message: string, options?: { cause?: unknown }) {
    super("RATE_LIMIT_STORE_UNAVAILABLE", message, options);
  }
}

/** Where buckets live: one process (memory) or shared by several (Redis). */
export interface RateLimitStore {
  /**
   * Takes `count` tokens (default 1, a single request) from `key`'s bucket in one atomic step: in mode
   * `upTo` (the default) as many as it holds, never more, so a batch of n items gets the first `granted`
   * of them through; in mode `all` all of them or none. Several processes can never together grant more
   * than the bucket held. Rejects with `RateLimitStoreError` when the store cannot be asked.
   */
  take(key: string, count?: number, mode?: TakeMode): Promise<RateLimitDecision>;
  close(): Promise<void>;
}

/** `count` as a store takes it: a whole number of tokens, at least one. */
export function tokenCount(count: number | undefined): number {
  const tokens = count ?? 1;
  if (!Number.isSafeInteger(tokens) || tokens < 1)
    throw new RangeError(`a rate-limit take needs a whole number of tokens ≥ 1, not ${count}`);
  return tokens;
}

/**
 * The token-bucket arithmetic, shared by every store: `tokens` and `at` are the bucket's state after
 * its last use; the bucket refills continuously up to `capacity`. Tokens are counted in thousandths so
 * that the state is integer (exact in Redis and in property tests).
 */
export function takeToken(
  policy: TokenBucketPolicy,
  state: { milliTokens: number; at: number } | undefined,
  now: number,
  count = 1,
  mode: TakeMode = "upTo",
) {
  const capacity = policy.capacity * 1000;
  const elapsed = state === undefined ? 0 : Math.max(0, now - state.at);
  // milli-tokens per millisecond = tokens per second
  const available = state === undefined ? capacity : Math.min(capacity, state.milliTokens + Math.floor(elapsed * policy.refillPerSecond));
  const decision = decide(policy, available, count, mode);
  return { decision, state: { milliTokens: available - decision.granted * 1000, at: now } };
}

/** The decision for a bucket holding `available` milli-tokens before a request for `count` tokens. */
export function decide(policy: TokenBucketPolicy, available: number, count = 1, mode: TakeMode = "upTo"): RateLimitDecision {
  const capacity = policy.capacity * 1000;
  const perMs = policy.refillPerSecond;
  const held = Math.floor(available / 1000);
  const granted = mode === "all" ? (held >= count ? count : 0) : Math.min(count, held);
  const allowed = granted > 0;
  const after = available - granted * 1000;
  // What the refusal waits for: one token, or all of them (at most a full bucket).
  const needed = mode === "all" ? Math.min(count * 1000, capacity) : 1000;
  return {
    allowed,
    granted,
    limit: policy.capacity,
    remaining: Math.floor(after / 1000),
    retryAfterMs: allowed ? 0 : Math.ceil((needed - available) / perMs),
    resetMs: Math.ceil((capacity - after) / perMs),
  };
}

/** `mode` as a store takes it: one of the two, whatever came over IPC. */
export function takeMode(mode: TakeMode | undefined): TakeMode {
  if (mode === undefined || mode === "upTo" || mode === "all") return mode ?? "upTo";
  throw new RangeError(`a rate-limit take is "upTo" or "all", not ${String(mode)}`);
}

/** Buckets in this process's memory; idle full buckets are dropped so the map cannot grow without bound. */
export class MemoryRateLimitStore implements RateLimitStore {
  readonly #policy: TokenBucketPolicy;
  readonly #buckets = new Map<string, { milliTokens: number; at: number }>();
  readonly #now: () => number;
  readonly #sweep: NodeJS.Timeout;

  constructor(policy: TokenBucketPolicy, now: () => number = Date.now) {
    this.#policy = policy;
    this.#now = now;
    const fullAfterMs = Math.ceil((policy.capacity * 1000) / policy.refillPerSecond);
    this.#sweep = setInterval(
      () => {
        const cutoff = this.#now() - fullAfterMs;
        for (const [key, bucket] of this.#buckets) if (bucket.at < cutoff) this.#buckets.delete(key);
      },
      Math.max(1_000, fullAfterMs),
    );
    this.#sweep.unref();
  }

  async take(key: string, count?: number, mode?: TakeMode): Promise<RateLimitDecision> {
    const { decision, state } = takeToken(this.#policy, this.#buckets.get(key), this.#now(), tokenCount(count), takeMode(mode));
    this.#buckets.set(key, state);
    return decision;
  }

  async close(): Promise<void> {
    clearInterval(this.#sweep);
  }
}

/** The IETF draft RateLimit headers, plus Retry-After when refused. */
export function rateLimitHeaders(decision: RateLimitDecision, policy: TokenBucketPolicy): Record<string, string> {
  const headers: Record<string, string> = {
    "RateLimit-Limit": String(decision.limit),
    "RateLimit-Remaining": String(decision.remaining),
    "RateLimit-Reset": String(Math.ceil(decision.resetMs / 1000)),
    "RateLimit-Policy": `${policy.capacity};w=${Math.ceil(policy.capacity / policy.refillPerSecond)}`,
  };
  if (!decision.allowed) headers["Retry-After"] = String(Math.max(1, Math.ceil(decision.retryAfterMs / 1000)));
  return headers;
}

/** The outcome of taking one token, with what the RateLimit headers need. */
export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Milliseconds until a token is available (0 when allowed). */
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

/** Where buckets live: one process (memory) or shared by several (Redis). */
export interface RateLimitStore {
  take(key: string): Promise<RateLimitDecision>;
  close(): Promise<void>;
}

/**
 * The token-bucket arithmetic, shared by every store: `tokens` and `at` are the bucket's state after
 * its last use; the bucket refills continuously up to `capacity`. Tokens are counted in thousandths so
 * that the state is integer (exact in Redis and in property tests).
 */
export function takeToken(policy: TokenBucketPolicy, state: { milliTokens: number; at: number } | undefined, now: number) {
  const capacity = policy.capacity * 1000;
  const elapsed = state === undefined ? 0 : Math.max(0, now - state.at);
  // milli-tokens per millisecond = tokens per second
  const available = state === undefined ? capacity : Math.min(capacity, state.milliTokens + Math.floor(elapsed * policy.refillPerSecond));
  const decision = decide(policy, available);
  return { decision, state: { milliTokens: decision.allowed ? available - 1000 : available, at: now } };
}

/** The decision for a bucket holding `available` milli-tokens before this request. */
export function decide(policy: TokenBucketPolicy, available: number): RateLimitDecision {
  const capacity = policy.capacity * 1000;
  const perMs = policy.refillPerSecond;
  const allowed = available >= 1000;
  const after = allowed ? available - 1000 : available;
  return {
    allowed,
    limit: policy.capacity,
    remaining: Math.floor(after / 1000),
    retryAfterMs: allowed ? 0 : Math.ceil((1000 - available) / perMs),
    resetMs: Math.ceil((capacity - after) / perMs),
  };
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
    this.#sweep = setInterval(() => {
      const cutoff = this.#now() - fullAfterMs;
      for (const [key, bucket] of this.#buckets) if (bucket.at < cutoff) this.#buckets.delete(key);
    }, Math.max(1_000, fullAfterMs));
    this.#sweep.unref();
  }

  async take(key: string): Promise<RateLimitDecision> {
    const { decision, state } = takeToken(this.#policy, this.#buckets.get(key), this.#now());
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

import { createClient } from "redis";
import { CONNECT_WAIT_MS, connectWithin } from "../redis-connection.ts";

import {
  decide,
  RateLimitStoreError,
  takeMode,
  tokenCount,
  type RateLimitDecision,
  type RateLimitStore,
  type TakeMode,
  type TokenBucketPolicy,
} from "./token-bucket.ts";

type RedisClient = ReturnType<typeof createClient>;

/** How long `close` waits for Redis to acknowledge QUIT before it drops the connection (a paused server never does). */
const QUIT_TIMEOUT_MS = 1_000;

// One atomic step of the token bucket in Redis, on Redis's own clock (TIME) so that several API
// processes agree: refill by elapsed time, take up to ARGV[3] tokens (as many as there are; with ARGV[4]
// = "all", all of them or none), keep the state until the bucket would be full again. Returns the milli-tokens available before this request;
// `decide` derives the same grant from it (one formula, two places: keep them alike).
const TAKE_TOKENS = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local capacity = tonumber(ARGV[1])
local perMs = tonumber(ARGV[2])
local wanted = tonumber(ARGV[3])
local state = redis.call('HMGET', KEYS[1], 'milli', 'at')
local available = capacity
if state[1] then
  available = math.min(capacity, tonumber(state[1]) + math.floor(math.max(0, now - tonumber(state[2])) * perMs))
end
local held = math.floor(available / 1000)
local granted = math.min(wanted, held)
if ARGV[4] == 'all' and held < wanted then granted = 0 end
local after = available - granted * 1000
redis.call('HSET', KEYS[1], 'milli', after, 'at', now)
redis.call('PEXPIRE', KEYS[1], math.ceil((capacity - after) / perMs) + 1000)
return available
`;

/**
 * Token buckets in Redis, shared by every API process pointed at the same server. A take that Redis
 * cannot answer rejects with `RateLimitStoreError`, at once while the connection is down; it does not
 * bound the wait for a server that takes the command and never answers (paused, or a dead peer not yet
 * noticed): `FallbackRateLimitStore`, which the API puts in front of it, does.
 */
export class RedisRateLimitStore implements RateLimitStore {
  readonly #policy: TokenBucketPolicy;
  readonly #client: RedisClient;
  readonly #prefix: string;

  private constructor(policy: TokenBucketPolicy, client: RedisClient, prefix: string) {
    this.#policy = policy;
    this.#client = client;
    this.#prefix = prefix;
  }

  static async connect(url: string, policy: TokenBucketPolicy, prefix = "avn:ratelimit:"): Promise<RedisRateLimitStore> {
    // No offline queue: while the connection is down, a take fails at once instead of waiting for it.
    const client: RedisClient = createClient({ url, disableOfflineQueue: true });
    client.on("error", () => undefined); // reconnects on its own; a failed take() reports the outage (once: FallbackRateLimitStore)
    await connectWithin(client, CONNECT_WAIT_MS);
    return new RedisRateLimitStore(policy, client, prefix);
  }

  async take(key: string, count?: number, mode?: TakeMode): Promise<RateLimitDecision> {
    const tokens = tokenCount(count);
    const grant = takeMode(mode);
    let answer: unknown;
    try {
      answer = await this.#client.eval(TAKE_TOKENS, {
        keys: [`${this.#prefix}${key}`],
        arguments: [String(this.#policy.capacity * 1000), String(this.#policy.refillPerSecond), String(tokens), grant],
      });
    } catch (error) {
      throw new RateLimitStoreError("the rate-limit store (Redis) did not answer", { cause: error });
    }
    return decide(this.#policy, Number(answer), tokens, grant);
  }

  /** QUIT when Redis answers it; otherwise (down, paused) the connection is dropped rather than waited for. */
  async close(): Promise<void> {
    if (this.#client.isReady) {
      let timer: NodeJS.Timeout | undefined;
      const quit = await Promise.race([
        this.#client.quit().then(
          () => true,
          () => false,
        ),
        new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), QUIT_TIMEOUT_MS))),
      ]);
      clearTimeout(timer);
      if (quit) return;
    }
    this.#client.destroy();
  }
}

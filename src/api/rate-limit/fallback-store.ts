import { EventEmitter } from "node:events";

import type { Logger } from "pino";

import { failureFields } from "../failure-log.ts";
import type { ApiMetrics } from "../metrics.ts";
import {
  MemoryRateLimitStore,
  RateLimitStoreError,
  type RateLimitDecision,
  type RateLimitStore,
  type TakeMode,
  type TokenBucketPolicy,
} from "./token-bucket.ts";

/**
 * How long a take waits for the shared store before this process decides alone. node-redis 6.3.1 cannot
 * bound it: its per-command `timeout` and `abortSignal` (`CommandOptions`) only reject a command still
 * waiting to be written (their listeners are removed once it is on the socket, commands-queue.js
 * `commandsToWrite`), so against a paused Redis, which accepts the bytes and never answers, they never
 * fire; its `socketTimeout` is an idle timeout of the socket, reset by every write. Hence a timer here.
 */
export const SHARED_TAKE_TIMEOUT_MS = 250;
/** While degraded, at most one take this often is sent to the shared store to see whether it answers again. */
export const PROBE_INTERVAL_MS = 1_000;
/**
 * The bucket a probe takes from when no request comes to take one: a key of its own, which no API key is
 * named (they are UUIDs), so it charges nobody. Each probe that reaches the store takes one token of it.
 */
export const IDLE_PROBE_KEY = "fallback-store-probe";

/** What a `FallbackRateLimitStore` emits as its mode changes (`once(store, "recovered")`). */
export interface FallbackRateLimitStoreEvents {
  /** The shared store failed or timed out: the per-process buckets answer from now on. */
  degraded: [];
  /** A probe was answered in time: the shared buckets are in use again. */
  recovered: [];
}

export interface FallbackRateLimitStoreOptions {
  /** The shared store (Redis): the one whose buckets count, whenever it answers. */
  shared: RateLimitStore;
  /** The shared store's policy: the per-process buckets apply the same one. */
  policy: TokenBucketPolicy;
  logger: Pick<Logger, "warn" | "info">;
  metrics: Pick<ApiMetrics, "rateLimitStoreDegraded" | "rateLimitFallbackTakes">;
  /** `SHARED_TAKE_TIMEOUT_MS` unless given (tests). */
  timeoutMs?: number;
  /** `PROBE_INTERVAL_MS` unless given (tests). */
  probeIntervalMs?: number;
}

/**
 * The shared buckets while the shared store answers, this process's own (a `MemoryRateLimitStore`, same
 * policy) while it does not: an outage of Redis costs the limit's precision, not the API. Degraded, each of
 * N processes grants a key up to the whole limit, so N× the limit at most (docs/api.md, "Request handling").
 *
 * - Answering: every take goes to the shared store, and waits `timeoutMs` for it at most. The first that
 *   fails or times out starts the degraded mode: one warning, `api_rate_limit_store_degraded` 1, and that
 *   take and the following ones are served by the per-process buckets (each counted,
 *   `api_rate_limit_fallback_takes_total`), without waiting for Redis.
 * - Degraded: once `probeIntervalMs` has passed since the outage began or the last probe, and nothing sent
 *   to the shared store is still unanswered, the next take is sent to it as a probe (one at a time, so a
 *   paused server accumulates no commands that it would all run on waking); when no take comes by then, a
 *   timer sends one itself, on `IDLE_PROBE_KEY`, so that an idle process sees the end of the outage too
 *   (and its gauge says so). The first probe it answers in time ends the degraded mode (one info line, the
 *   gauge 0, the timer cleared) and a take's decision is that take's answer. A late answer to an earlier
 *   take ends nothing: a server slower than `timeoutMs` stays degraded, rather than switching back and forth
 *   (and logging it) with every request.
 *
 * It emits `degraded` and `recovered` as the mode changes (`FallbackRateLimitStoreEvents`).
 *
 * What a take that timed out asked may still be done by the server later (a paused one wakes up): that key
 * is then charged in both buckets, for the takes in flight when the outage began and for at most one probe
 * at a time.
 */
export class FallbackRateLimitStore extends EventEmitter<FallbackRateLimitStoreEvents> implements RateLimitStore {
  readonly #shared: RateLimitStore;
  readonly #local: MemoryRateLimitStore;
  readonly #logger: FallbackRateLimitStoreOptions["logger"];
  readonly #metrics: FallbackRateLimitStoreOptions["metrics"];
  readonly #timeoutMs: number;
  readonly #probeIntervalMs: number;
  /** When the degraded mode began (performance.now()), or undefined while the shared store answers. */
  #degradedSince: number | undefined;
  /** When the last probe was sent (performance.now()). */
  #probedAt = 0;
  /** Takes sent to the shared store and not answered yet (those that timed out too). */
  #unanswered = 0;
  /** Takes served by the per-process buckets in the current degraded mode. */
  #fallbackTakes = 0;
  /** While degraded: when the next probe is due, it is sent unless a take has been one meanwhile (unref'd). */
  #probeTimer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(options: FallbackRateLimitStoreOptions) {
    super();
    this.#shared = options.shared;
    this.#local = new MemoryRateLimitStore(options.policy);
    this.#logger = options.logger;
    this.#metrics = options.metrics;
    this.#timeoutMs = options.timeoutMs ?? SHARED_TAKE_TIMEOUT_MS;
    this.#probeIntervalMs = options.probeIntervalMs ?? PROBE_INTERVAL_MS;
    this.#metrics.rateLimitStoreDegraded.set(0);
  }

  /** Whether takes are served by this process's buckets now (the shared store failed and has not answered a probe since). */
  get degraded(): boolean {
    return this.#degradedSince !== undefined;
  }

  async take(key: string, count?: number, mode?: TakeMode): Promise<RateLimitDecision> {
    const probe = this.#degradedSince !== undefined;
    if (probe) {
      if (!this.#probeDue()) return this.#takeLocal(key, count, mode);
      this.#probedAt = performance.now();
    }
    let decision: RateLimitDecision;
    try {
      decision = await this.#askShared(key, count, mode);
    } catch (error) {
      // Anything else (a count that is not a whole number of tokens…) is the caller's, not an outage.
      if (!(error instanceof RateLimitStoreError)) throw error;
      this.#degrade(error);
      return this.#takeLocal(key, count, mode);
    }
    // Only a probe ends the degraded mode: an answer to a take sent before it began says little about now.
    if (probe) this.#recover();
    return decision;
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#probeTimer);
    this.#probeTimer = undefined;
    await this.#local.close();
    await this.#shared.close();
  }

  /** The shared store's decision, or a `RateLimitStoreError` once `timeoutMs` has passed without it. */
  #askShared(key: string, count: number | undefined, mode: TakeMode | undefined): Promise<RateLimitDecision> {
    return new Promise((resolve, reject) => {
      // Rejected a turn later (setImmediate): after a stall of this process (a GC pause, a heavy request), Redis's
      // answer already waiting in the socket is read first, so the stall alone does not start an outage.
      const timer = setTimeout(
        () =>
          setImmediate(() => reject(new RateLimitStoreError(`the rate-limit store (Redis) did not answer within ${this.#timeoutMs} ms`))),
        this.#timeoutMs,
      );
      this.#unanswered += 1;
      this.#shared.take(key, count, mode).then(
        (decision) => {
          this.#unanswered -= 1;
          clearTimeout(timer);
          resolve(decision); // nothing, once the timer has rejected
        },
        (error: unknown) => {
          this.#unanswered -= 1;
          clearTimeout(timer);
          reject(error instanceof Error ? error : new RateLimitStoreError("the rate-limit store (Redis) failed", { cause: error }));
        },
      );
    });
  }

  /** Whether a probe may be sent now: `probeIntervalMs` since the outage began or the last probe, nothing unanswered. */
  #probeDue(): boolean {
    const since = Math.max(this.#degradedSince ?? 0, this.#probedAt);
    return this.#unanswered === 0 && performance.now() - since >= this.#probeIntervalMs;
  }

  /** While degraded: a probe of its own when the next one is due, unless a take has been it (then the one after). */
  #scheduleProbe(): void {
    clearTimeout(this.#probeTimer);
    this.#probeTimer = undefined;
    if (this.#degradedSince === undefined || this.#closed) return;
    // Due `probeIntervalMs` after the last probe; with a take still unanswered, checked again an interval later.
    const since = Math.max(this.#degradedSince, this.#probedAt);
    const wait = this.#unanswered > 0 ? this.#probeIntervalMs : since + this.#probeIntervalMs - performance.now();
    this.#probeTimer = setTimeout(() => void this.#probeIdle(), Math.max(0, Math.ceil(wait)));
    this.#probeTimer.unref(); // an idle process exits as it would without it
  }

  /** The timer's probe: a take from `IDLE_PROBE_KEY`'s bucket; answered in time, the degraded mode ends. */
  async #probeIdle(): Promise<void> {
    this.#probeTimer = undefined;
    if (this.#degradedSince === undefined || this.#closed) return;
    if (!this.#probeDue()) return this.#scheduleProbe();
    this.#probedAt = performance.now();
    try {
      await this.#askShared(IDLE_PROBE_KEY, 1, "upTo");
    } catch {
      // Not answered (in time): still degraded, and already said so; the next probe is due an interval later.
      return this.#scheduleProbe();
    }
    if (!this.#closed) this.#recover();
  }

  #takeLocal(key: string, count: number | undefined, mode: TakeMode | undefined): Promise<RateLimitDecision> {
    this.#fallbackTakes += 1;
    this.#metrics.rateLimitFallbackTakes.inc();
    return this.#local.take(key, count, mode);
  }

  #degrade(error: RateLimitStoreError): void {
    if (this.#degradedSince !== undefined) return;
    this.#degradedSince = performance.now();
    this.#fallbackTakes = 0;
    this.#metrics.rateLimitStoreDegraded.set(1);
    this.#logger.warn(
      { failure: failureFields(error), timeoutMs: this.#timeoutMs },
      "rate-limit store (Redis) unreachable: per-process token buckets until it answers again (each API process grants up to the whole limit)",
    );
    this.#scheduleProbe();
    this.emit("degraded");
  }

  #recover(): void {
    if (this.#degradedSince === undefined) return;
    const degradedMs = Math.round(performance.now() - this.#degradedSince);
    this.#degradedSince = undefined;
    clearTimeout(this.#probeTimer);
    this.#probeTimer = undefined;
    this.#metrics.rateLimitStoreDegraded.set(0);
    this.#logger.info(
      { degradedMs, fallbackTakes: this.#fallbackTakes },
      "rate-limit store (Redis) answers again: shared token buckets in use",
    );
    this.emit("recovered");
  }
}

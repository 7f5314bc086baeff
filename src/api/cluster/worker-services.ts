import type { RateLimitDecision, RateLimitStore, TakeMode } from "../rate-limit/token-bucket.ts";
import { PrimaryClient } from "./ipc.ts";

/** The rate-limit buckets of the cluster's primary, used by a worker: every worker shares them. */
export class PrimaryRateLimitStore implements RateLimitStore {
  readonly #primary: PrimaryClient;

  constructor(primary: PrimaryClient) {
    this.#primary = primary;
  }

  take(key: string, count = 1, mode: TakeMode = "upTo"): Promise<RateLimitDecision> {
    return this.#primary.call("rateLimit", "take", [key, count, mode]);
  }

  async close(): Promise<void> {
    // The buckets belong to the primary, which closes them when the last worker is gone.
  }
}

/** `/metrics` of a worker: every worker's metrics, summed by the primary (prom-client's AggregatorRegistry). */
export function clusterMetricsExposition(primary: PrimaryClient): () => Promise<string> {
  return () => primary.call<string>("metrics", "exposition", []);
}

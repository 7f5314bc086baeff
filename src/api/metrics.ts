import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

import type { NetworkNodes } from "./network/network-service.ts";

/** The API's Prometheus metrics, in a registry of their own (several servers can run in one process). */
export class ApiMetrics {
  readonly registry = new Registry();
  /**
   * The text `/metrics` answers: this registry's metrics, or in a worker of an API cluster every
   * worker's metrics summed by the primary.
   */
  exposition: () => Promise<string> = () => this.registry.metrics();
  readonly requests = new Counter({
    name: "api_requests_total",
    help: "HTTP requests by route and status",
    labelNames: ["route", "status"] as const,
    registers: [this.registry],
  });
  readonly latency = new Histogram({
    name: "api_request_duration_seconds",
    help: "HTTP request latency by route",
    labelNames: ["route"] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });
  readonly upstream = new Counter({
    name: "api_upstream_requests_total",
    help: "HTTP requests sent to source-chain RPCs, by chain and outcome",
    labelNames: ["chain", "outcome"] as const,
    registers: [this.registry],
  });
  readonly cache = new Counter({
    name: "api_cache_lookups_total",
    help: "Result cache lookups by chain and result",
    labelNames: ["chain", "result"] as const,
    registers: [this.registry],
  });
  readonly attestationRounds = new Counter({
    name: "api_attestation_rounds_total",
    help: "Attested queries by chain and outcome (quorum, timeout, unavailable)",
    labelNames: ["chain", "outcome"] as const,
    registers: [this.registry],
  });
  readonly attestationLatency = new Histogram({
    name: "api_attestation_round_duration_seconds",
    help: "Time from fan-out to quorum of attested queries, by chain",
    labelNames: ["chain"] as const,
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });
  readonly attestationAnswers = new Counter({
    name: "api_attestation_answers_total",
    help: "Circuit node answers to attestation rounds by outcome (agreed, disagreed, late, silent, refused, invalid, unlicensed)",
    labelNames: ["outcome"] as const,
    registers: [this.registry],
  });
  readonly attestationRoundResults = new Counter({
    name: "api_attestation_round_results_total",
    help: "Round results sent to the signers of the winning struct (sent), or skipped over the rate budget (sampled-out)",
    labelNames: ["outcome"] as const,
    registers: [this.registry],
  });
  readonly attestationNodes = new Gauge({
    name: "api_attestation_nodes_connected",
    help: "Circuit nodes admitted to the attestation hub",
    registers: [this.registry],
  });
  readonly attestationRefusedConnections = new Counter({
    name: "api_attestation_connections_refused_total",
    help: "Hub connections refused or dropped, by reason (pending-cap, address-cap, refused-recently, hello-rate, wrong-url, auth, timeout, not-operator, check-failed, protocol, licenses-lost)",
    labelNames: ["reason"] as const,
    registers: [this.registry],
  });

  readonly webhookPairs = new Gauge({
    name: "api_webhook_watched_pairs",
    help: "Pairs (owner, asset) the chain followers watch, by chain: in the process that leads them, 0 elsewhere",
    labelNames: ["chain"] as const,
    aggregator: "sum",
    registers: [this.registry],
  });
  readonly webhookPosition = new Gauge({
    name: "api_webhook_follower_position",
    help: "The last Ethereum block or Solana slot the followers recorded, by chain (the leader's)",
    labelNames: ["chain"] as const,
    aggregator: "max",
    registers: [this.registry],
  });
  readonly webhookAttempts = new Counter({
    name: "api_webhook_attempts_total",
    help: "Webhook delivery attempts by outcome (delivered, failed)",
    labelNames: ["outcome"] as const,
    registers: [this.registry],
  });

  readonly attestationBusRefused = new Counter({
    name: "api_attestation_bus_messages_refused_total",
    help: "Messages read from the hub's Redis bus and dropped, by kind (round, answer, presence) and reason (unauthenticated: no valid HUB_BUS_SECRET MAC; stale; replayed; malformed)",
    labelNames: ["kind", "reason"] as const,
    registers: [this.registry],
  });

  /**
   * Whether the hub's bus (Redis) is unreachable, so that rounds count this instance's nodes only. Each
   * worker of a cluster has its own connection; the primary reports the highest (`max`): 1 when any is
   * cut off, not how many.
   */
  readonly attestationBusDegraded = new Gauge({
    name: "api_attestation_bus_degraded",
    help: "1 while the attestation hub's bus (Redis) is unreachable: rounds count this instance's nodes only (the highest of a cluster's workers)",
    aggregator: "max",
    registers: [this.registry],
  });
  readonly attestationBusFailures = new Counter({
    name: "api_attestation_bus_failures_total",
    help: "Operations of the attestation hub's Redis bus that failed or were skipped while it was unreachable, by operation (connection, presence, peers, stats-write, stats-read, round, answer, done, probe)",
    labelNames: ["operation"] as const,
    registers: [this.registry],
  });

  /**
   * Whether rate-limit takes are served by per-process buckets because the shared store (Redis) does not
   * answer. Each worker of a cluster has its own connection; the primary reports the highest (`max`), so the
   * value stays 0 or 1 (any worker degraded), where a sum would count workers.
   */
  readonly rateLimitStoreDegraded = new Gauge({
    name: "api_rate_limit_store_degraded",
    help: "1 while rate limits are enforced per process because the shared store (Redis) does not answer (the highest of a cluster's workers)",
    aggregator: "max",
    registers: [this.registry],
  });
  readonly rateLimitFallbackTakes = new Counter({
    name: "api_rate_limit_fallback_takes_total",
    help: "Rate-limit takes served by the per-process buckets while the shared store (Redis) did not answer",
    registers: [this.registry],
  });

  readonly attestationL2Requests = new Counter({
    name: "api_attestation_l2_requests_total",
    help: "HTTP requests the hub's license checks sent to the L2 RPC (a JSON-RPC batch is one), by purpose (login: what a login flood costs the L2; rounds: rounds and re-checks)",
    labelNames: ["purpose"] as const,
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  // The request path's label sets, resolved once each: prom-client hashes the labels on every call.
  readonly #requestCounters = new Map<string, { inc(): void }>();
  readonly #latencyHistograms = new Map<string, { observe(value: number): void }>();
  readonly #cacheCounters = new Map<string, { inc(): void }>();

  /** Counts one answered request and its latency (called once per request: kept cheap). */
  recordRequest(route: string, status: number, seconds: number): void {
    const key = `${route} ${status}`;
    let counter = this.#requestCounters.get(key);
    if (counter === undefined) this.#requestCounters.set(key, (counter = this.requests.labels(route, String(status))));
    counter.inc();
    let histogram = this.#latencyHistograms.get(route);
    if (histogram === undefined) this.#latencyHistograms.set(route, (histogram = this.latency.labels(route)));
    histogram.observe(seconds);
  }

  /** Counts one result-cache lookup. */
  recordCacheLookup(chain: string, hit: boolean): void {
    const key = `${chain} ${hit}`;
    let counter = this.#cacheCounters.get(key);
    if (counter === undefined) this.#cacheCounters.set(key, (counter = this.cache.labels(chain, hit ? "hit" : "miss")));
    counter.inc();
  }
  /**
   * Publishes `network`'s figures (GET /api/network/nodes) as gauges per license, read on each scrape (the
   * service's snapshot, at most a couple of seconds old). A scrape while the L2 does not answer keeps the
   * last values. In a cluster, each worker reads the same chain: the primary takes one worker's values
   * (`aggregator: "first"`), not their sum.
   */
  publishNetwork(network: { nodes(): Promise<NetworkNodes> }): void {
    // The gauges, collected side by side, share the service's snapshot: it reads the chain once for them.
    const read = () => network.nodes().catch(() => undefined);
    const names = { scoreBps: "score", uptimeBps: "uptime", participationBps: "participation", accuracyBps: "accuracy" } as const;
    for (const [figure, name] of Object.entries(names) as [keyof typeof names, string][]) {
      const gauge: Gauge<"license"> = new Gauge({
        name: `api_network_license_${name}_bps`,
        help: `Each license's ${name} in the current epoch, in basis points (GET /api/network/nodes)`,
        labelNames: ["license"] as const,
        aggregator: "first",
        registers: [this.registry],
        async collect() {
          const nodes = await read();
          for (const node of nodes?.nodes ?? []) gauge.set({ license: String(node.licenseId) }, node[figure]);
        },
      });
    }
    const epoch: Gauge = new Gauge({
      name: "api_network_epoch",
      help: "The verification registry's current epoch",
      aggregator: "first",
      registers: [this.registry],
      async collect() {
        const nodes = await read();
        if (nodes !== undefined) epoch.set(nodes.epoch);
      },
    });
  }
}

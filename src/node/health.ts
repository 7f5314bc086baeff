import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

import type { Logger } from "pino";
import { Counter, Gauge, Registry, collectDefaultMetrics } from "prom-client";

/** The node's Prometheus metrics, in a registry of their own. */
export class NodeMetrics {
  readonly registry = new Registry();
  readonly jobsAnswered = new Counter({ name: "node_jobs_answered_total", help: "Job answers submitted", registers: [this.registry] });
  readonly votesSent = new Counter({ name: "node_votes_sent_total", help: "License votes submitted", registers: [this.registry] });
  readonly transactions = new Counter({
    name: "node_transactions_total",
    help: "Transactions settled, by kind and outcome",
    labelNames: ["kind", "outcome"] as const,
    registers: [this.registry],
  });
  readonly qosProbes = new Counter({
    name: "node_qos_probes_total",
    help: "The node's probes of the API and of its own sources, by target and outcome",
    labelNames: ["target", "outcome"] as const,
    registers: [this.registry],
  });
  readonly peerRounds = new Counter({
    name: "node_peer_rounds_total",
    help: "Round results of the hub, by outcome (counted, unknown, not-winner, over-budget, failed)",
    labelNames: ["outcome"] as const,
    registers: [this.registry],
  });
  readonly passErrors = new Counter({ name: "node_pass_errors_total", help: "Job passes that failed", registers: [this.registry] });
  readonly delegatedLicenses = new Gauge({
    name: "node_delegated_licenses",
    help: "Licenses delegated to this node",
    registers: [this.registry],
  });
  readonly lastBlock = new Gauge({
    name: "node_last_processed_block",
    help: "Last L2 block whose jobs are all handled",
    registers: [this.registry],
  });
  readonly attestations = new Counter({
    name: "node_attestations_total",
    help: "Attestation requests of the hub, by kind (balance, condition) and outcome (signed, refused)",
    labelNames: ["kind", "outcome"] as const,
    registers: [this.registry],
  });
  readonly hubConnected = new Gauge({
    name: "node_attestation_hub_connected",
    help: "1 while the attestation hub has admitted this node",
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }
}

/**
 * The optional health and metrics port: `GET /healthz` (JSON status) and `GET /metrics` (Prometheus). The
 * node needs no inbound port otherwise.
 */
export async function startHealthServer(
  host: string,
  port: number,
  metrics: NodeMetrics,
  status: () => Record<string, unknown>,
): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((request, response) => {
    if (request.method === "GET" && request.url === "/healthz") {
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(status()));
    } else if (request.method === "GET" && request.url === "/metrics") {
      void metrics.registry.metrics().then((text) => response.writeHead(200, { "content-type": metrics.registry.contentType }).end(text));
    } else {
      response.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ status: 404, message: "Not found" }));
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, resolve);
  });
  return {
    url: `http://${host}:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** What `/healthz` reports, read when asked. */
export interface HealthStatus {
  phase: string;
  burner: string;
  delegatedLicenses: () => bigint[];
  lastProcessedBlock: () => number | undefined;
}

/** Serves `/healthz` and `/metrics` when a port is configured; returns how to close it. */
export async function serveHealth(
  config: { NODE_HEALTH_HOST: string; NODE_HEALTH_PORT?: number },
  metrics: NodeMetrics,
  status: HealthStatus,
  logger: Logger,
): Promise<(() => Promise<void>) | undefined> {
  if (config.NODE_HEALTH_PORT === undefined) return undefined;
  const server = await startHealthServer(config.NODE_HEALTH_HOST, config.NODE_HEALTH_PORT, metrics, () => ({
    status: status.phase,
    burner: status.burner,
    delegatedLicenses: status.delegatedLicenses().map(String),
    lastProcessedBlock: status.lastProcessedBlock() ?? null,
  }));
  logger.child({ component: "health" }).info({ url: server.url }, "health and metrics served");
  return () => server.close();
}

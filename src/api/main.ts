import type { FastifyInstance } from "fastify";

import { AggregatorRegistry } from "prom-client";
import { pino } from "pino";

import { createSourceReaders } from "../chains/source-readers.ts";
import { ReorgWatch } from "../chains/evm/reorg-watch.ts";
import { createFailoverTransport } from "../chains/solana/failover-transport.ts";
import { PinnedReaders } from "../chains/pinned-readers.ts";
import { JsonRpcPool } from "../chains/rpc/json-rpc-pool.ts";
import { AttestationHub } from "./attestation-hub/hub.ts";
import { attestAt } from "./attestation-hub/attested-query.ts";
import type { HubBus } from "./attestation-hub/bus/bus.ts";
import { PrimaryHubBus } from "./attestation-hub/bus/primary-bus.ts";
import { RedisHubBus } from "./attestation-hub/bus/redis-bus.ts";
import { PrimaryClient } from "./cluster/ipc.ts";
import { clusterMetricsExposition, PrimaryRateLimitStore } from "./cluster/worker-services.ts";
import { readExporter } from "./attestation-hub/exporter-check.ts";
import {
  attestationSettings,
  hubBusSecret,
  linkChainId,
  networkSettings,
  proofL2RpcUrl,
  redactedConfig,
  webhookSettings,
  type ApiConfig,
} from "./config.ts";
import { ApiKeys } from "./keys/api-keys.ts";
import { KeyVerifier } from "./keys/key-verifier.ts";
import { ApiMetrics } from "./metrics.ts";
import { NetworkService } from "./network/network-service.ts";
import { FallbackRateLimitStore } from "./rate-limit/fallback-store.ts";
import { RedisRateLimitStore } from "./rate-limit/redis-store.ts";
import { MemoryRateLimitStore, type RateLimitStore } from "./rate-limit/token-bucket.ts";
import { buildApiServer } from "./server.ts";
import { failureFields } from "./failure-log.ts";
import { UsageMeter } from "./usage/usage-meter.ts";
import { UsageStore } from "./usage/usage-store.ts";
import { WebhookService } from "./webhooks/webhook-service.ts";

export interface RunningApi {
  app: FastifyInstance;
  url: string;
  /** Stops accepting connections, finishes the requests in flight, writes the usage counters, then closes the stores. */
  close(): Promise<void>;
}

export interface StartApiOptions {
  rateLimitStore?: RateLimitStore;
  /**
   * This process is a worker of a cluster (`API_WORKERS` > 1): its primary migrated the key database,
   * holds the shared rate-limit buckets (unless in Redis) and sums the workers' metrics.
   */
  clusterWorker?: boolean;
}

/**
 * Connections waiting to be accepted (the kernel caps it at net.core.somaxconn, 4096 on current Linux).
 * The server accepts one connection per event-loop turn, so a client opening a thousand at once overflows
 * Node's default of 511: the kernel drops the SYNs beyond it, their clients send them again a second
 * later, and their queries trickle in one by one instead of sharing the reader's batches.
 */
const LISTEN_BACKLOG = 4_096;

/** Wires the API from its configuration: upstream pools, readers, key store, usage, rate limits, server. */
export async function startApi(config: ApiConfig, options: StartApiOptions = {}): Promise<RunningApi> {
  const log = pino({ level: config.LOG_LEVEL });
  const primary = options.clusterWorker === true ? new PrimaryClient() : undefined;
  const metrics = new ApiMetrics();
  if (primary !== undefined) {
    // The primary asks each worker for its metrics (prom-client's cluster protocol) and sums them.
    AggregatorRegistry.setRegistries([metrics.registry]);
    new AggregatorRegistry();
    metrics.exposition = clusterMetricsExposition(primary);
  }
  const upstream = (chain: "evm" | "svm", urls: readonly string[]) => ({
    urls,
    timeoutMs: config.UPSTREAM_TIMEOUT_MS,
    onUpstreamRequest: (outcome: "ok" | "error") => metrics.upstream.inc({ chain, outcome }),
  });
  const readers = createSourceReaders({ evm: upstream("evm", config.EVM_RPC_URLS), solana: upstream("svm", config.SOLANA_RPC_URLS) });
  const keyLog = log.child({ component: "api-keys" });
  const keys = await ApiKeys.open(config.API_KEYS_DB, {
    migrate: primary === undefined,
    onIdleConnectionError: (error) =>
      keyLog.warn({ failure: failureFields(error) }, "key database connection lost while idle; reconnecting on the next query"),
  });
  const keyVerifier = await KeyVerifier.create(keys, {
    onPollError: (error) => keyLog.warn({ failure: failureFields(error) }, "key database unreachable; remembered keys forgotten"),
  });
  const usage = new UsageMeter(new UsageStore(keys.db), {
    flushMs: config.USAGE_FLUSH_MS,
    onFlushError: (error) => keyLog.warn({ failure: failureFields(error) }, "usage counters not written; kept for the next flush"),
  });
  const policy = { capacity: config.RATE_LIMIT_CAPACITY, refillPerSecond: config.RATE_LIMIT_REFILL_PER_SECOND };
  // Limits shared by several API hosts live in Redis (in this process's memory while Redis does not
  // answer: an outage degrades the limit, not the API); a cluster's workers share the primary's; one
  // process keeps them in memory.
  const store =
    options.rateLimitStore ??
    (config.REDIS_URL !== undefined
      ? new FallbackRateLimitStore({
          shared: await RedisRateLimitStore.connect(config.REDIS_URL, policy),
          policy,
          metrics,
          logger: log.child({ component: "rate-limit" }),
        })
      : primary !== undefined
        ? new PrimaryRateLimitStore(primary)
        : new MemoryRateLimitStore(policy));
  // The hub reads NodeRegistry on the L2; its pinned reads use their own Solana transport (same URLs).
  const hubSettings = attestationSettings(config);
  const hubLog = log.child({ component: "attestation-hub" });
  // Several instances of the hub (docs/attestations.md): through Redis when it is configured (any number
  // of processes on any hosts), else through the cluster's primary; one process alone needs neither.
  // Every message on Redis is sealed with HUB_BUS_SECRET, and what is read checked with it.
  const redisUrl = config.REDIS_URL;
  const bus: ((name: string) => Promise<HubBus>) | undefined =
    redisUrl !== undefined
      ? (name) => RedisHubBus.connect(redisUrl, name, hubLog, { secret: hubBusSecret(config), metrics })
      : primary !== undefined
        ? async () => new PrimaryHubBus(primary, hubLog)
        : undefined;
  const hub = hubSettings === undefined ? undefined : await AttestationHub.create({ ...hubSettings, bus, metrics, logger: hubLog });
  // `?eas=true`: the exporter as it states itself. One that checks with another verifier stops the start below,
  // once the server (which closes the hub) is built, as a contradicting L2_CHAIN_ID does.
  let exporterRefusal: Error | undefined;
  const exporter =
    hubSettings?.exporter === undefined
      ? undefined
      : await readExporter(
          new JsonRpcPool({ urls: [hubSettings.l2RpcUrl], timeoutMs: config.UPSTREAM_TIMEOUT_MS }),
          hubSettings.exporter,
          hubSettings.attestationVerifier,
        ).catch((error: unknown) => {
          exporterRefusal = error as Error;
          return undefined;
        });
  const attestation =
    hub === undefined
      ? undefined
      : {
          hub,
          pinned: new PinnedReaders(readers.evmRpc, createFailoverTransport(upstream("svm", config.SOLANA_RPC_URLS))),
          evm: readers.evm,
          solana: readers.solana,
          exporter,
        };
  // The chain the Solana link messages name: the hub's when it is on. A contradicting L2_CHAIN_ID stops
  // the start below, once the server (which closes the hub) is built.
  let link: { chainId?: bigint; mismatch?: Error };
  try {
    link = { chainId: linkChainId(config, hub?.domain.chainId) };
  } catch (error) {
    link = { mismatch: error as Error };
  }
  // `?proof=true`: the L2 whose L1Block names the Ethereum block; the proofs themselves come from the
  // API's own Ethereum source.
  const proofL2Url = proofL2RpcUrl(config);
  const proofs =
    proofL2Url === undefined
      ? undefined
      : {
          l2: new JsonRpcPool({ urls: [proofL2Url], timeoutMs: config.UPSTREAM_TIMEOUT_MS }),
          ethereum: readers.evmRpc,
          l1BlockHashes: config.PROOF_L1_BLOCK_HASHES,
        };
  // `GET /api/network/nodes`: the registries' events on the L2, read on demand.
  const networkL2 = networkSettings(config);
  const network =
    networkL2 === undefined
      ? undefined
      : new NetworkService({
          l2: new JsonRpcPool({ urls: [networkL2.l2RpcUrl], timeoutMs: config.UPSTREAM_TIMEOUT_MS }),
          verificationRegistry: networkL2.verificationRegistry,
          qosReports: networkL2.qosReports,
          fromBlock: networkL2.fromBlock,
        });
  if (network !== undefined) metrics.publishNetwork(network);
  // Webhooks: the subscriptions and their queue live in the key database; the follower runs in one process.
  const webhookConfig = webhookSettings(config);
  const webhookLog = log.child({ component: "webhooks" });
  const webhooks =
    webhookConfig === undefined
      ? undefined
      : new WebhookService({
          ...webhookConfig,
          db: keys.db,
          evmRpc: readers.evmRpc,
          metrics,
          solanaTransport: createFailoverTransport(upstream("svm", config.SOLANA_RPC_URLS)),
          attest:
            attestation === undefined
              ? undefined
              : async (chain, owner, asset, block) => (await attestAt(attestation, chain, owner, asset, block)).attestation,
          onError: (error, part) => webhookLog.warn({ failure: failureFields(error), part }, "webhook pass failed; tried again"),
          onUnreadable: (chain, owner, asset) =>
            webhookLog.warn(
              { chain, owner, asset },
              "a watched token's balance could not be read at a change; that change is not recorded",
            ),
        });
  const answers = async (probe: () => Promise<unknown>) =>
    probe().then(
      () => true,
      () => false,
    );

  const app = await buildApiServer({
    keys: keyVerifier,
    usage,
    rateLimit: { store, policy, attestCost: config.ATTEST_COST },
    evm: readers.evm,
    evmReorgs: new ReorgWatch(readers.evmRpc),
    solana: readers.solana,
    checkUpstreams: async () => ({
      evm: await answers(() => readers.evmRpc.request("eth_blockNumber", [])),
      svm: await answers(() => readers.solana.checkHealth()),
    }),
    metrics,
    attestation,
    proofs,
    linkChainId: link.chainId,
    network,
    webhooks: webhooks?.routes(),
    bodyLimitBytes: config.BODY_LIMIT_BYTES,
    cacheTtlMs: config.CACHE_TTL_MS,
    loggerInstance: log.child({ component: "api-server" }),
  });
  const close = async () => {
    await app.close(); // waits for in-flight requests
    await webhooks?.close(); // finishes and records the deliveries in flight
    await usage.close(); // writes what they counted
    await store.close();
    keyVerifier.close();
    await keys.close();
    primary?.close();
  };
  if (link.mismatch !== undefined) {
    await close();
    throw link.mismatch;
  }
  if (exporterRefusal !== undefined) {
    await close();
    throw exporterRefusal;
  }
  log.info({ config: redactedConfig(config) }, "API configuration");
  const url = await app.listen({ host: config.API_HOST, port: config.API_PORT, backlog: LISTEN_BACKLOG });
  webhooks?.start();
  return { app, url, close };
}

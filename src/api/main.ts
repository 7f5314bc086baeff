import type { FastifyInstance } from "fastify";

import { pino } from "pino";

import { createSourceReaders } from "../chains/source-readers.ts";
import { createFailoverTransport } from "../chains/solana/failover-transport.ts";
import { PinnedReaders } from "../node/pinned-readers.ts";
import { AttestationHub } from "./attestation-hub/hub.ts";

import { attestationSettings, redactedConfig, type ApiConfig } from "./config.ts";
import { CachedKeyVerifier } from "./keys/key-cache.ts";
import { ApiKeyStore } from "./keys/key-store.ts";
import { ApiMetrics } from "./metrics.ts";
import { RedisRateLimitStore } from "./rate-limit/redis-store.ts";
import { MemoryRateLimitStore, type RateLimitStore } from "./rate-limit/token-bucket.ts";
import { buildApiServer } from "./server.ts";

export interface RunningApi {
  app: FastifyInstance;
  url: string;
  /** Stops accepting connections, finishes the requests in flight, then closes the stores. */
  close(): Promise<void>;
}

/** Wires the API from its configuration: upstream pools, readers, key store, rate limits, server. */
export async function startApi(config: ApiConfig, options: { rateLimitStore?: RateLimitStore } = {}): Promise<RunningApi> {
  const metrics = new ApiMetrics();
  const upstream = (chain: "evm" | "svm", urls: readonly string[]) => ({
    urls,
    timeoutMs: config.UPSTREAM_TIMEOUT_MS,
    onUpstreamRequest: (outcome: "ok" | "error") => metrics.upstream.inc({ chain, outcome }),
  });
  const readers = createSourceReaders({ evm: upstream("evm", config.EVM_RPC_URLS), solana: upstream("svm", config.SOLANA_RPC_URLS) });
  const keys = new ApiKeyStore(config.API_KEYS_DB);
  const keyVerifier = new CachedKeyVerifier(keys);
  const policy = { capacity: config.RATE_LIMIT_CAPACITY, refillPerSecond: config.RATE_LIMIT_REFILL_PER_SECOND };
  // Limits shared by several API processes live in Redis; one process keeps them in memory.
  const store =
    options.rateLimitStore ??
    (config.REDIS_URL === undefined ? new MemoryRateLimitStore(policy) : await RedisRateLimitStore.connect(config.REDIS_URL, policy));
  // The hub reads NodeRegistry on the L2; its pinned reads use their own Solana transport (same URLs).
  const hubSettings = attestationSettings(config);
  const hub =
    hubSettings === undefined ? undefined : await AttestationHub.create({ ...hubSettings, metrics, logger: pino({ level: config.LOG_LEVEL }).child({ component: "attestation-hub" }) });
  const attestation =
    hub === undefined
      ? undefined
      : { hub, pinned: new PinnedReaders(readers.evmRpc, createFailoverTransport(upstream("svm", config.SOLANA_RPC_URLS))), evm: readers.evm, solana: readers.solana };
  const answers = async (probe: () => Promise<unknown>) => probe().then(() => true, () => false);

  const app = await buildApiServer({
    verifyKey: (key) => keyVerifier.verify(key),
    rateLimit: { store, policy },
    evm: readers.evm,
    solana: readers.solana,
    checkUpstreams: async () => ({
      evm: await answers(() => readers.evmRpc.request("eth_blockNumber", [])),
      svm: await answers(() => readers.solana.checkHealth()),
    }),
    metrics,
    attestation,
    bodyLimitBytes: config.BODY_LIMIT_BYTES,
    cacheTtlMs: config.CACHE_TTL_MS,
    logger: { level: config.LOG_LEVEL },
  });
  app.log.info({ config: redactedConfig(config) }, "API configuration");
  const url = await app.listen({ host: config.API_HOST, port: config.API_PORT });
  return {
    app,
    url,
    async close() {
      await app.close(); // waits for in-flight requests
      await store.close();
      keyVerifier.close();
      keys.close();
    },
  };
}

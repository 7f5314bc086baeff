import type { AddressInfo } from "node:net";

import type { FastifyInstance } from "fastify";

import { ApiKeyStore } from "../../src/api/keys/key-store.js";
import { ApiMetrics } from "../../src/api/metrics.js";
import { MemoryRateLimitStore, type TokenBucketPolicy } from "../../src/api/rate-limit/token-bucket.js";
import { buildApiServer, type ApiServerDependencies } from "../../src/api/server.js";
import { createSourceReaders } from "../../src/chains/source-readers.js";
import type { SourceFixtures } from "../../src/devnet/source-chains.js";

export interface TestApi {
  app: FastifyInstance;
  baseUrl: string;
  apiKey: string;
  keys: ApiKeyStore;
  metrics: ApiMetrics;
  close(): Promise<void>;
}

/** The API on a real HTTP port over the test source chains, with one live key. */
export async function startTestApi(
  sources: SourceFixtures,
  options: { policy?: TokenBucketPolicy; evmUrls?: string[]; solanaUrls?: string[]; timeoutMs?: number } & Partial<ApiServerDependencies> = {},
): Promise<TestApi> {
  const keys = new ApiKeyStore(":memory:");
  const apiKey = keys.create("tests").key;
  const policy = options.policy ?? { capacity: 100_000, refillPerSecond: 100_000 };
  const store = new MemoryRateLimitStore(policy);
  const metrics = new ApiMetrics();
  const timeoutMs = options.timeoutMs ?? 2_000;
  const readers = createSourceReaders({
    evm: { urls: options.evmUrls ?? [sources.anvil.rpcUrl], timeoutMs, backoffMs: 10, onUpstreamRequest: (outcome) => metrics.upstream.inc({ chain: "evm", outcome }) },
    solana: { urls: options.solanaUrls ?? [sources.solanaRpc.url], timeoutMs, backoffMs: 10 },
  });
  const app = await buildApiServer({
    verifyKey: (key) => keys.verify(key),
    rateLimit: { store, policy },
    evm: readers.evm,
    solana: readers.solana,
    checkUpstreams: async () => ({ evm: true, svm: true }),
    metrics,
    ...options,
  });
  await app.listen({ port: 0, host: "127.0.0.1" });
  return {
    app,
    baseUrl: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`,
    apiKey,
    keys,
    metrics,
    async close() {
      await app.close();
      await store.close();
      keys.close();
    },
  };
}

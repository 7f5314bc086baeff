import type { AddressInfo } from "node:net";

import type { FastifyInstance } from "fastify";

import { ApiKeys } from "../../src/api/keys/api-keys.js";
import { KeyVerifier } from "../../src/api/keys/key-verifier.js";
import { ApiMetrics } from "../../src/api/metrics.js";
import { UsageMeter } from "../../src/api/usage/usage-meter.js";
import { UsageStore } from "../../src/api/usage/usage-store.js";
import { MemoryRateLimitStore, type TokenBucketPolicy } from "../../src/api/rate-limit/token-bucket.js";
import { buildApiServer, type ApiServerDependencies } from "../../src/api/server.js";
import { createSourceReaders } from "../../src/chains/source-readers.js";
import type { SourceFixtures } from "../../src/devnet/source-chains.js";

export interface TestApi {
  app: FastifyInstance;
  baseUrl: string;
  apiKey: string;
  /** The key store the server's KeyVerifier reads (an in-memory SQLite database). */
  keys: ApiKeys;
  metrics: ApiMetrics;
  /** The usage meter over `keys`, when asked for with `meterUsage`. */
  meter: UsageMeter | undefined;
  close(): Promise<void>;
}

/** The API on a real HTTP port over the test source chains, with one live key. */
export async function startTestApi(
  sources: SourceFixtures,
  options: { policy?: TokenBucketPolicy; evmUrls?: string[]; solanaUrls?: string[]; timeoutMs?: number; meterUsage?: boolean } & Partial<ApiServerDependencies> = {},
): Promise<TestApi> {
  const keys = await ApiKeys.open(":memory:");
  const apiKey = (await keys.create("tests")).key;
  const keyVerifier = await KeyVerifier.create(keys);
  // Flushed by the tests themselves (and on close), so that what they read is what they wrote.
  const meter = options.meterUsage === true ? new UsageMeter(new UsageStore(keys.db), { flushMs: 3_600_000 }) : undefined;
  const policy = options.policy ?? { capacity: 100_000, refillPerSecond: 100_000 };
  const store = new MemoryRateLimitStore(policy);
  const metrics = new ApiMetrics();
  const timeoutMs = options.timeoutMs ?? 2_000;
  const readers = createSourceReaders({
    evm: { urls: options.evmUrls ?? [sources.anvil.rpcUrl], timeoutMs, backoffMs: 10, onUpstreamRequest: (outcome) => metrics.upstream.inc({ chain: "evm", outcome }) },
    solana: { urls: options.solanaUrls ?? [sources.solanaRpc.url], timeoutMs, backoffMs: 10 },
  });
  const app = await buildApiServer({
    keys: keyVerifier,
    rateLimit: { store, policy },
    evm: readers.evm,
    solana: readers.solana,
    checkUpstreams: async () => ({ evm: true, svm: true }),
    metrics,
    usage: meter,
    ...options,
  });
  await app.listen({ port: 0, host: "127.0.0.1" });
  return {
    app,
    baseUrl: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`,
    apiKey,
    keys,
    metrics,
    meter,
    async close() {
      await app.close();
      await meter?.close();
      await store.close();
      keyVerifier.close();
      await keys.close();
    },
  };
}

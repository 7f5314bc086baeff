import type { AddressInfo } from "node:net";

import type { FastifyInstance } from "fastify";
import type { Kysely } from "kysely";

import { ApiKeys } from "../../src/api/keys/api-keys.ts";
import type { KeyDatabaseSchema } from "../../src/api/keys/database/schema.ts";
import type { SubscriptionRoutesDependencies } from "../../src/api/webhooks/subscription-routes.ts";
import { KeyVerifier } from "../../src/api/keys/key-verifier.ts";
import { ApiMetrics } from "../../src/api/metrics.ts";
import { UsageMeter } from "../../src/api/usage/usage-meter.ts";
import { UsageStore } from "../../src/api/usage/usage-store.ts";
import { MemoryRateLimitStore, type TokenBucketPolicy } from "../../src/api/rate-limit/token-bucket.ts";
import { buildApiServer, type ApiServerDependencies } from "../../src/api/server.ts";
import { createSourceReaders } from "../../src/chains/source-readers.ts";
import type { SourceFixtures } from "../../src/devnet/source-chains.ts";

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

/** The API on a real HTTP port over the test source chains (only their RPC endpoints are used), with one live key. */
export async function startTestApi(
  sources: Pick<SourceFixtures, "anvil" | "solanaRpc">,
  options: {
    policy?: TokenBucketPolicy;
    evmUrls?: string[];
    solanaUrls?: string[];
    timeoutMs?: number;
    meterUsage?: boolean;
    /** Tokens an attested answer takes (the server's default otherwise). */
    attestCost?: number;
    /** The webhooks' routes over the server's own key database (docs/webhooks.md). */
    withWebhooks?: (db: Kysely<KeyDatabaseSchema>) => SubscriptionRoutesDependencies;
  } & Partial<ApiServerDependencies> = {},
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
    evm: {
      urls: options.evmUrls ?? [sources.anvil.rpcUrl],
      timeoutMs,
      backoffMs: 10,
      onUpstreamRequest: (outcome) => metrics.upstream.inc({ chain: "evm", outcome }),
    },
    solana: { urls: options.solanaUrls ?? [sources.solanaRpc.url], timeoutMs, backoffMs: 10 },
  });
  const { withWebhooks, ...dependencies } = options;
  const app = await buildApiServer({
    keys: keyVerifier,
    rateLimit: { store, policy, attestCost: options.attestCost },
    evm: readers.evm,
    solana: readers.solana,
    checkUpstreams: async () => ({ evm: true, svm: true }),
    metrics,
    usage: meter,
    webhooks: withWebhooks?.(keys.db),
    ...dependencies,
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

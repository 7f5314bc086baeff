import { z } from "zod";

import { parseEnvironment, urlList, urlOrigin } from "../common/environment.ts";

const httpUrls = urlList(/^https?$/);

const schema = z.object({
  API_HOST: z.string().default("127.0.0.1"),
  API_PORT: z.coerce.number().int().min(0).max(65_535).default(8787),
  EVM_RPC_URLS: httpUrls,
  SOLANA_RPC_URLS: httpUrls,
  API_KEYS_DB: z.string().min(1).default(".data/api-keys.sqlite"),
  RATE_LIMIT_CAPACITY: z.coerce.number().int().positive().default(60),
  RATE_LIMIT_REFILL_PER_SECOND: z.coerce.number().positive().default(10),
  REDIS_URL: z.url({ protocol: /^rediss?$/ }).optional(),
  UPSTREAM_TIMEOUT_MS: z.coerce.number().int().positive().default(3_000),
  CACHE_TTL_MS: z.coerce.number().int().min(0).default(2_000),
  BODY_LIMIT_BYTES: z.coerce.number().int().positive().default(4_096),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
});

export type ApiConfig = Readonly<z.infer<typeof schema>>;

/** Parses the API's configuration from the environment once; the result is frozen. */
export function loadApiConfig(env: NodeJS.ProcessEnv): ApiConfig {
  return parseEnvironment(schema, env, "API configuration");
}

/** The configuration as it may be logged: URLs reduced to their origin (paths and queries carry API keys). */
export function redactedConfig(config: ApiConfig): Record<string, unknown> {
  return {
    ...config,
    EVM_RPC_URLS: config.EVM_RPC_URLS.map(urlOrigin),
    SOLANA_RPC_URLS: config.SOLANA_RPC_URLS.map(urlOrigin),
    REDIS_URL: config.REDIS_URL === undefined ? undefined : urlOrigin(config.REDIS_URL),
  };
}

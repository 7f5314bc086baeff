import { availableParallelism } from "node:os";

import { getAddress, isAddress } from "ethers";
import { z } from "zod";

import { listenHost, port, rpcUrl, serviceUrl, sourceChainFields, wsRpcUrl } from "../common/config-fields.ts";
import { loggedAsOrigin, redactConfig } from "../common/config-redaction.ts";
import { parseEnvironment } from "../common/environment.ts";

const evmAddress = z
  .string()
  .refine((value) => isAddress(value), "not an EVM address")
  .transform((value) => getAddress(value));
const ATTESTATION_REQUIRED = [
  "ATTESTATION_L2_RPC_URL",
  "ATTESTATION_L2_WS_URL",
  "ATTESTATION_NODE_REGISTRY",
  "ATTESTATION_VERIFIER",
] as const;

const schema = z
  .object({
    API_HOST: listenHost(),
    API_PORT: port().default(8787),
    ...sourceChainFields,
    /** A SQLite file (embedded default) or `postgres://…` (a server several API instances share; its URL carries a password). */
    API_KEYS_DB: loggedAsOrigin(z.string().min(1)).default(".data/api-keys.sqlite"),
    /** Worker processes sharing the port; unset: one per core (one with the attestation hub). */
    API_WORKERS: z.coerce.number().int().min(1).max(256).optional(),
    /** How often each process writes its usage counters (a crash loses at most this much counting). */
    USAGE_FLUSH_MS: z.coerce.number().int().min(100).max(300_000).default(5_000),
    /** Burst size; the default holds one full batch (MAX_BATCH_ITEMS), so a fresh key's first full batch goes through. */
    RATE_LIMIT_CAPACITY: z.coerce.number().int().positive().default(100),
    RATE_LIMIT_REFILL_PER_SECOND: z.coerce.number().positive().default(10),
    REDIS_URL: serviceUrl(/^rediss?$/).optional(),
    CACHE_TTL_MS: z.coerce.number().int().min(0).default(2_000),
    BODY_LIMIT_BYTES: z.coerce.number().int().positive().default(4_096),
    // The attestation hub: on when the four below are set (all or none), off otherwise (?attest=true → 501).
    ATTESTATION_L2_RPC_URL: rpcUrl().optional(),
    /** The L2's WebSocket JSON-RPC URL: the hub follows its new heads and pins `issuedAt` to chain time. */
    ATTESTATION_L2_WS_URL: wsRpcUrl().optional(),
    ATTESTATION_NODE_REGISTRY: evmAddress.optional(),
    ATTESTATION_VERIFIER: evmAddress.optional(),
    /** Ethereum blocks below the head an attested answer is pinned to (reorg safety). */
    ATTESTATION_EVM_CONFIRMATIONS: z.coerce.number().int().min(0).max(1_000).default(3),
    /** How long an attested query waits for the quorum before answering 503. */
    ATTESTATION_DEADLINE_MS: z.coerce.number().int().positive().max(60_000).default(3_000),
    /** How often each connected node's licenses are read again. */
    ATTESTATION_RECHECK_MS: z.coerce.number().int().positive().default(10_000),
    /** The hub's name in the login challenge nodes sign. */
    ATTESTATION_HUB_NAME: z.string().min(1).max(100).default("avn-attestation-hub"),
  })
  .superRefine((config, context) => {
    const set = ATTESTATION_REQUIRED.filter((name) => config[name] !== undefined);
    if (set.length > 0 && set.length < ATTESTATION_REQUIRED.length) {
      const missing = ATTESTATION_REQUIRED.filter((name) => config[name] === undefined);
      context.addIssue({
        code: "custom",
        path: [missing[0]],
        message: `the attestation hub needs ${missing.join(", ")} too (or none of ${ATTESTATION_REQUIRED.join(", ")})`,
      });
    }
    // Nodes keep one WebSocket to one process; an attested query reaching another worker would find none.
    if (set.length > 0 && config.API_WORKERS !== undefined && config.API_WORKERS > 1) {
      context.addIssue({
        code: "custom",
        path: ["API_WORKERS"],
        message: "the attestation hub runs in one process: API_WORKERS must be 1 (or unset) when ATTESTATION_* is set",
      });
    }
  });

export type ApiConfig = Readonly<z.infer<typeof schema>>;

/** The hub's settings when it is configured, else undefined. */
export function attestationSettings(config: ApiConfig) {
  const {
    ATTESTATION_L2_RPC_URL: l2RpcUrl,
    ATTESTATION_L2_WS_URL: l2WsUrl,
    ATTESTATION_NODE_REGISTRY: nodeRegistry,
    ATTESTATION_VERIFIER: attestationVerifier,
  } = config;
  if (l2RpcUrl === undefined || l2WsUrl === undefined || nodeRegistry === undefined || attestationVerifier === undefined) return undefined;
  return {
    l2RpcUrl,
    l2WsUrl,
    nodeRegistry,
    attestationVerifier,
    hubName: config.ATTESTATION_HUB_NAME,
    deadlineMs: config.ATTESTATION_DEADLINE_MS,
    evmConfirmations: config.ATTESTATION_EVM_CONFIRMATIONS,
    recheckMs: config.ATTESTATION_RECHECK_MS,
  };
}

/** How many API processes to run: `API_WORKERS`, else one per core, but one when the attestation hub is on. */
export function apiWorkerCount(config: ApiConfig, cores = availableParallelism()): number {
  if (config.API_WORKERS !== undefined) return config.API_WORKERS;
  return attestationSettings(config) === undefined ? cores : 1;
}

/** Parses the API's configuration from the environment once; the result is frozen. */
export function loadApiConfig(env: NodeJS.ProcessEnv): ApiConfig {
  return parseEnvironment(schema, env, "API configuration");
}

/** The configuration as it may be logged: each URL by its origin (paths, queries and user parts carry keys and passwords). */
export function redactedConfig(config: ApiConfig): Record<string, unknown> {
  return redactConfig(schema, config);
}

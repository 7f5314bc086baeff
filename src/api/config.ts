import { availableParallelism } from "node:os";

import { getAddress, isAddress } from "ethers";
import { z } from "zod";

import { booleanFlag, listenHost, port, rpcUrl, serviceUrl, sourceChainFields, wsRpcUrl } from "../common/config-fields.ts";
import { loggedAsOrigin, redactConfig, secret } from "../common/config-redaction.ts";
import { commaSeparated, parseEnvironment, urlList } from "../common/environment.ts";
import { MAX_ROUND_DEADLINE_MS, MIN_BUS_SECRET_LENGTH } from "./attestation-hub/bus/bus.ts";
import { DEFAULT_RESULTS_PER_SECOND } from "./attestation-hub/rounds.ts";
import { DEFAULT_PING_MS } from "./attestation-hub/sessions.ts";
import { DEFAULT_ATTEST_COST } from "./server/dependencies.ts";

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
    /** Worker processes sharing the port; unset: one per core. */
    API_WORKERS: z.coerce.number().int().min(1).max(256).optional(),
    /** How often each process writes its usage counters (a crash loses at most this much counting). */
    USAGE_FLUSH_MS: z.coerce.number().int().min(100).max(300_000).default(5_000),
    /** Burst size; the default holds one full batch (MAX_BATCH_ITEMS), so a fresh key's first full batch goes through. */
    RATE_LIMIT_CAPACITY: z.coerce.number().int().positive().default(100),
    RATE_LIMIT_REFILL_PER_SECOND: z.coerce.number().positive().default(10),
    REDIS_URL: serviceUrl(/^rediss?$/).optional(),
    /**
     * The secret every instance of the attestation hub authenticates its Redis bus messages with (rounds,
     * answers, presence): required with `REDIS_URL` when the hub is on, the same on every instance. Logged
     * as `<set>`; no error message repeats it.
     */
    HUB_BUS_SECRET: secret(
      z
        .string()
        .min(
          MIN_BUS_SECRET_LENGTH,
          `at least ${MIN_BUS_SECRET_LENGTH} characters (a random one: openssl rand -hex 32), the same on every API instance`,
        ),
    ).optional(),
    CACHE_TTL_MS: z.coerce.number().int().min(0).default(2_000),
    BODY_LIMIT_BYTES: z.coerce.number().int().positive().default(4_096),
    // The attestation hub: on when the four below are set (all or none), off otherwise (?attest=true → 501).
    ATTESTATION_L2_RPC_URL: rpcUrl().optional(),
    /** The L2's WebSocket JSON-RPC URL: the hub follows its new heads and pins `issuedAt` to chain time. */
    ATTESTATION_L2_WS_URL: wsRpcUrl().optional(),
    ATTESTATION_NODE_REGISTRY: evmAddress.optional(),
    ATTESTATION_VERIFIER: evmAddress.optional(),
    /** The L2's `AttestationExporter`: `?attest=true&eas=true` adds the export's call for it (501 without it). */
    ATTESTATION_EXPORTER: evmAddress.optional(),
    /** Ethereum blocks below the head an attested answer is pinned to (reorg safety). */
    ATTESTATION_EVM_CONFIRMATIONS: z.coerce.number().int().min(0).max(1_000).default(3),
    /** How long an attested query waits for the quorum before answering 503. */
    ATTESTATION_DEADLINE_MS: z.coerce.number().int().positive().max(MAX_ROUND_DEADLINE_MS).default(3_000),
    /**
     * Round results (`roundDone`: who signed, how fast) this instance sends its nodes a second, on average;
     * rounds beyond it send none. 0 turns the nodes' observations of their peers off.
     */
    ATTESTATION_ROUND_RESULTS_PER_SECOND: z.coerce.number().int().min(0).max(1_000).default(DEFAULT_RESULTS_PER_SECOND),
    /** How often each connected node's licenses are read again. */
    ATTESTATION_RECHECK_MS: z.coerce.number().int().positive().default(10_000),
    /**
     * How often the hub pings each node's WebSocket. A node unheard from (no pong, no frame) for longer than
     * this and 2 s is silent: neither asked nor counted towards the quorum until it answers again. At least
     * 100 ms (each ping is a frame to every node); at most 60 s, since the pings are what keeps a node's
     * otherwise idle connection open through proxies that close idle ones (60 s is a common timeout).
     */
    ATTESTATION_PING_MS: z.coerce.number().int().min(100).max(60_000).default(DEFAULT_PING_MS),
    /**
     * This deployment's label in the hub's name (`hubName`: the label, the L2 chain id and the
     * AttestationVerifier address), which nodes require in the login challenge: tells apart two hubs of one
     * contract deployment (staging and production, say). Every instance of one hub uses the same label.
     */
    ATTESTATION_HUB_LABEL: z
      .string()
      .regex(/^[a-z0-9][a-z0-9._-]{0,39}$/, "lowercase letters, digits, '.', '_' or '-', at most 40")
      .default("main"),
    /**
     * The WebSocket URLs nodes dial to reach this hub (comma-separated, ws:// or wss://…/attest/ws), as the
     * nodes write them: a node signs the URL it dialled, and a login signed for another URL (a relay's) is
     * refused. Unset: the loopback URLs of the port the API listens on (a hub on one machine with its nodes).
     */
    ATTESTATION_HUB_PUBLIC_URLS: loggedAsOrigin(urlList(/^wss?$/)).optional(),
    /** WebSocket connections not logged in yet, in all (beyond it an upgrade is answered 503). */
    ATTESTATION_MAX_PENDING: z.coerce.number().int().min(1).max(100_000).default(256),
    /** …and per source address (beyond it 429). */
    ATTESTATION_MAX_PENDING_PER_ADDRESS: z.coerce.number().int().min(1).max(10_000).default(8),
    /** Logins (signed hellos) the hub checks per second, in all; a burst of twice as many is let through. */
    ATTESTATION_HELLOS_PER_SECOND: z.coerce.number().positive().max(10_000).default(20),
    /** How long a refused burner or source address is refused again without a check. */
    ATTESTATION_REFUSAL_MEMORY_MS: z.coerce.number().int().min(0).max(3_600_000).default(60_000),
    /**
     * Proxies whose X-Forwarded-For is believed (comma-separated addresses or CIDR ranges, as proxy-addr
     * reads them: `loopback`, `10.0.0.0/8`…); a connection from anywhere else is counted by its own address.
     */
    TRUSTED_PROXIES: commaSeparated().optional(),
    /**
     * The rollup's L2 JSON-RPC URL whose L1Block predeploy names the Ethereum block `POST /api/ccq-evm?proof=true`
     * proves at; unset: `ATTESTATION_L2_RPC_URL`; neither: `?proof=true` answers 501. Proofs need the API's
     * Ethereum source (`EVM_RPC_URLS`) to be that rollup's own L1 (else 501 per request).
     */
    PROOF_L2_RPC_URL: rpcUrl().optional(),
    /**
     * The L2's `L1BlockHashes`: with it, `?proof=true` names its latest recorded L1 block when recent (within
     * 32 blocks of `L1Block`'s), so a proof stays verifiable after `L1Block` moves on (docs/proofs.md).
     */
    PROOF_L1_BLOCK_HASHES: evmAddress.optional(),
    /**
     * Rate-limit tokens one `?attest=true` answer takes (it asks every connected node); a `?proof=true` answer
     * takes as many (it makes several upstream calls).
     */
    ATTEST_COST: z.coerce.number().int().min(1).max(1_000).default(DEFAULT_ATTEST_COST),
    /**
     * The L2 chain id a Solana owner's link message names (`POST /api/conditions` with both owners). The
     * hub's EIP-712 domain gives it when the hub is on (then this, if set, must agree); unset without the
     * hub, such requests answer 501.
     */
    L2_CHAIN_ID: z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER).optional(),
    /**
     * The L2's `VerificationRegistry`: with it, `GET /api/network/nodes` publishes each license's quality of
     * service in the current epoch, read from the registries' events; unset, that route answers 501.
     */
    NETWORK_VERIFICATION_REGISTRY: evmAddress.optional(),
    /** The L2 JSON-RPC URL those events are read from; unset: `ATTESTATION_L2_RPC_URL`. */
    NETWORK_L2_RPC_URL: rpcUrl().optional(),
    /** The L2's `QosReports`, where the nodes publish what they measured: `GET /api/network/status` reads it. */
    NETWORK_QOS_REPORTS: evmAddress.optional(),
    /** The block the registries were deployed in: events are read from there (0 reads the whole chain). */
    NETWORK_FROM_BLOCK: z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER).default(0),
    /**
     * Webhooks (docs/webhooks.md): `on` follows the Ethereum source for the subscriptions in the key database and
     * delivers their changes; `off` leaves the routes out (404) and follows nothing.
     */
    WEBHOOKS: z.enum(["on", "off"]).default("on"),
    /** Pairs (owner, asset) one API key may watch. */
    WEBHOOK_MAX_PER_KEY: z.coerce.number().int().min(1).max(10_000_000).default(100_000),
    /**
     * Accept webhook URLs that resolve to private, loopback or link-local addresses (and deliver to them). Off
     * by default: a subscriber could otherwise make the API POST into its own network. The local stack sets it.
     */
    WEBHOOK_ALLOW_PRIVATE: booleanFlag(false),
    /** How often the head is asked for, and how often a process not woken by a change looks for due deliveries. */
    WEBHOOK_POLL_MS: z.coerce.number().int().min(20).max(60_000).default(250),
    /** Deliveries in flight at once per process (each to a different subscription). */
    WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(1_000).default(32),
    /** The first retry's delay; each next one doubles, up to WEBHOOK_RETRY_MAX_MS. */
    WEBHOOK_RETRY_BASE_MS: z.coerce.number().int().min(10).max(3_600_000).default(5_000),
    WEBHOOK_RETRY_MAX_MS: z.coerce.number().int().min(10).max(86_400_000).default(3_600_000),
    /** How long a change is retried before its subscription is marked failing (its changes still recorded). */
    WEBHOOK_RETRY_WINDOW_MS: z.coerce
      .number()
      .int()
      .min(1_000)
      .max(30 * 86_400_000)
      .default(86_400_000),
  })
  .superRefine((config, context) => {
    // A key's bucket never holds more than its capacity: a higher price could never be paid.
    if (config.ATTEST_COST > config.RATE_LIMIT_CAPACITY) {
      context.addIssue({
        code: "custom",
        path: ["ATTEST_COST"],
        message: `at most RATE_LIMIT_CAPACITY (${config.RATE_LIMIT_CAPACITY}): a key's bucket never holds more tokens than that`,
      });
    }
    if (config.NETWORK_VERIFICATION_REGISTRY !== undefined && (config.NETWORK_L2_RPC_URL ?? config.ATTESTATION_L2_RPC_URL) === undefined) {
      context.addIssue({
        code: "custom",
        path: ["NETWORK_L2_RPC_URL"],
        message: "required with NETWORK_VERIFICATION_REGISTRY (or ATTESTATION_L2_RPC_URL): the L2 the network's events are read from",
      });
    }
    const set = ATTESTATION_REQUIRED.filter((name) => config[name] !== undefined);
    if (set.length > 0 && set.length < ATTESTATION_REQUIRED.length) {
      const missing = ATTESTATION_REQUIRED.filter((name) => config[name] === undefined);
      context.addIssue({
        code: "custom",
        path: [missing[0]],
        message: `the attestation hub needs ${missing.join(", ")} too (or none of ${ATTESTATION_REQUIRED.join(", ")})`,
      });
    }
    // The hub's instances trust only what is sealed with the secret on Redis: without it, anyone who can
    // write to Redis could hide nodes' answers, ask the nodes to sign, or break every attested request.
    if (config.REDIS_URL !== undefined && set.length === ATTESTATION_REQUIRED.length && config.HUB_BUS_SECRET === undefined) {
      context.addIssue({
        code: "custom",
        path: ["HUB_BUS_SECRET"],
        message:
          "required with REDIS_URL when the attestation hub is on: the API instances authenticate their messages on Redis with it " +
          `(at least ${MIN_BUS_SECRET_LENGTH} characters, the same on every instance; a random one: openssl rand -hex 32)`,
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
    exporter: config.ATTESTATION_EXPORTER,
    hubLabel: config.ATTESTATION_HUB_LABEL,
    deadlineMs: config.ATTESTATION_DEADLINE_MS,
    resultsPerSecond: config.ATTESTATION_ROUND_RESULTS_PER_SECOND,
    evmConfirmations: config.ATTESTATION_EVM_CONFIRMATIONS,
    recheckMs: config.ATTESTATION_RECHECK_MS,
    pingMs: config.ATTESTATION_PING_MS,
    admission: {
      publicUrls: config.ATTESTATION_HUB_PUBLIC_URLS,
      maxPending: config.ATTESTATION_MAX_PENDING,
      maxPendingPerAddress: config.ATTESTATION_MAX_PENDING_PER_ADDRESS,
      hellosPerSecond: config.ATTESTATION_HELLOS_PER_SECOND,
      refusalMemoryMs: config.ATTESTATION_REFUSAL_MEMORY_MS,
      trustedProxies: config.TRUSTED_PROXIES ?? [],
    },
  };
}

/**
 * The secret of the hub's Redis bus; the configuration requires it whenever the bus is used (`REDIS_URL`
 * with the hub on), so this throws only when called without one.
 */
export function hubBusSecret(config: ApiConfig): string {
  if (config.HUB_BUS_SECRET === undefined) throw new Error("HUB_BUS_SECRET is required with REDIS_URL when the attestation hub is on");
  return config.HUB_BUS_SECRET;
}

/** The L2 `?proof=true` reads its L1Block on: `PROOF_L2_RPC_URL`, else `ATTESTATION_L2_RPC_URL`, else undefined (proofs off). */
export function proofL2RpcUrl(config: ApiConfig): string | undefined {
  return config.PROOF_L2_RPC_URL ?? config.ATTESTATION_L2_RPC_URL;
}

/**
 * The L2 chain id link messages name (`linkMessage`): the attestation hub's (its EIP-712 domain's, read
 * from the L2) when the hub is on, else `L2_CHAIN_ID`, else undefined (requests naming both owners answer
 * 501). Throws when both are known and differ: links signed for one chain would be checked against the
 * other.
 */
export function linkChainId(config: ApiConfig, hubChainId: bigint | undefined): bigint | undefined {
  const configured = config.L2_CHAIN_ID === undefined ? undefined : BigInt(config.L2_CHAIN_ID);
  if (hubChainId !== undefined && configured !== undefined && hubChainId !== configured)
    throw new Error(
      `L2_CHAIN_ID is ${configured}, but the attestation hub's L2 (ATTESTATION_L2_RPC_URL) is chain ${hubChainId}: set it to ${hubChainId} or leave it unset`,
    );
  return hubChainId ?? configured;
}

/**
 * How many API processes to run: `API_WORKERS`, else one per core. With the attestation hub on, a round
 * opened in one process reaches the nodes connected to the others through Redis (`REDIS_URL`), or else
 * through the cluster's primary.
 */
export function apiWorkerCount(config: ApiConfig, cores = availableParallelism()): number {
  return config.API_WORKERS ?? cores;
}

/** Parses the API's configuration from the environment once; the result is frozen. */
export function loadApiConfig(env: NodeJS.ProcessEnv): ApiConfig {
  return parseEnvironment(schema, env, "API configuration");
}

/** The configuration as it may be logged: each URL by its origin (paths, queries and user parts carry keys and passwords). */
export function redactedConfig(config: ApiConfig): Record<string, unknown> {
  return redactConfig(schema, config);
}

/** Where `GET /api/network/nodes` reads the registries' events, when configured, else undefined. */
export function networkSettings(
  config: ApiConfig,
): { l2RpcUrl: string; verificationRegistry: string; qosReports: string | undefined; fromBlock: number } | undefined {
  const l2RpcUrl = config.NETWORK_L2_RPC_URL ?? config.ATTESTATION_L2_RPC_URL;
  if (config.NETWORK_VERIFICATION_REGISTRY === undefined || l2RpcUrl === undefined) return undefined;
  return {
    l2RpcUrl,
    verificationRegistry: config.NETWORK_VERIFICATION_REGISTRY,
    qosReports: config.NETWORK_QOS_REPORTS,
    fromBlock: config.NETWORK_FROM_BLOCK,
  };
}

/** The webhooks' settings when they are on, else undefined. */
export function webhookSettings(config: ApiConfig) {
  if (config.WEBHOOKS === "off") return undefined;
  return {
    maxPerKey: config.WEBHOOK_MAX_PER_KEY,
    allowPrivate: config.WEBHOOK_ALLOW_PRIVATE,
    pollMs: config.WEBHOOK_POLL_MS,
    concurrency: config.WEBHOOK_CONCURRENCY,
    retry: { baseDelayMs: config.WEBHOOK_RETRY_BASE_MS, maxDelayMs: config.WEBHOOK_RETRY_MAX_MS, windowMs: config.WEBHOOK_RETRY_WINDOW_MS },
  };
}

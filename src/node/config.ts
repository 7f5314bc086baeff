import { getAddress, isAddress } from "ethers";
import { z } from "zod";

import { listenHost, port, rpcUrl, rpcUrlList, serviceUrl, sourceChainFields } from "../common/config-fields.ts";
import { loggedAsOrigin, secret } from "../common/config-redaction.ts";
import { DEFAULT_HUB_LABEL, hubName, hubUrlAllowed } from "../common/hub-protocol.ts";
import { redactConfig } from "../common/config-redaction.ts";
import { commaSeparated, parseEnvironment, urlList } from "../common/environment.ts";

/** `ATTESTATION_MAX_BLOCK_LAG`'s default: why 10, at the setting below. */
export const DEFAULT_ATTESTATION_MAX_BLOCK_LAG = 10;

const evmAddress = z
  .string()
  .refine((value) => isAddress(value), "not an EVM address (0x + 40 hex digits, valid EIP-55 checksum if mixed case)");

const schema = z
  .object({
    /** The wallet or wallets that own the licenses this node works for (comma-separated). */
    OWNERS_ALLOWLIST: commaSeparated()
      .pipe(z.array(evmAddress).min(1))
      .transform((owners) => owners.map((owner) => getAddress(owner))),
    /** Burner key, last processed block and submission journal live here (a volume in the container). */
    NODE_CACHE_DIR: z.string().min(1).default("cache"),
    L2_RPC_URLS: rpcUrlList(),
    /** Optional: new jobs are then seen at once instead of at the next poll. */
    L2_WS_URL: rpcUrl(/^wss?$/).optional(),
    VERIFICATION_REGISTRY: evmAddress.transform((value) => getAddress(value)),
    ...sourceChainFields,
    /** First L2 block to scan when the cache holds no position yet (default: the latest block minus one job timeout's worth). */
    START_BLOCK: z.coerce.number().int().min(0).optional(),
    POLL_INTERVAL_MS: z.coerce.number().int().positive().default(2_000),
    HEARTBEAT_INTERVAL_SECONDS: z.coerce.number().int().positive().default(60),
    /** Most job answers in one submitResults transaction. */
    MAX_SUBMISSIONS_PER_TX: z.coerce.number().int().min(1).max(64).default(16),
    /** A transaction not mined after this long is sent again with higher fees (same nonce). */
    FEE_BUMP_AFTER_MS: z.coerce.number().int().positive().default(20_000),
    /** Fee bumps stop at this maximum fee per gas. */
    MAX_FEE_PER_GAS_GWEI: z.coerce.number().positive().default(100),
    /** Most gas one submitResults transaction asks for (batches are cut to fit). */
    MAX_GAS_PER_TX: z.coerce.bigint().positive().default(8_000_000n),
    /** Blocks below the L2 head a job must be before it is scanned (reorg safety; 0 on a local chain). */
    CONFIRMATIONS: z.coerce.number().int().min(0).default(1),
    /** Most blocks per eth_getLogs request (providers cap ranges). */
    LOG_BLOCK_RANGE: z.coerce.number().int().positive().default(1_000),
    /** Most jobs answered per pass. */
    MAX_JOBS_PER_PASS: z.coerce.number().int().positive().default(200),
    /** Below this L2 balance (wei) the node warns that its burner needs gas money. */
    MIN_BURNER_BALANCE_WEI: z.coerce.bigint().nonnegative().default(5_000_000_000_000_000n),
    /** Optional health and metrics port (the node needs no inbound port otherwise). */
    NODE_HEALTH_PORT: port().optional(),
    NODE_HEALTH_HOST: listenHost(),
    /**
     * Optional: the API's attestation hub, one or several URLs of the same hub (comma-separated, ws:// or
     * wss://…/attest/ws), tried in turn: the node moves to the next one when a connection closes or fails.
     * Without it (nor `ATTESTATION_HUB_URL`) the node does not attest.
     */
    ATTESTATION_HUB_URLS: loggedAsOrigin(urlList(/^wss?$/)).optional(),
    /** One hub URL (the setting before `ATTESTATION_HUB_URLS`; set one of the two). */
    ATTESTATION_HUB_URL: serviceUrl(/^wss?$/).optional(),
    /** The hub's label in its name (`hubName`), as the API's `ATTESTATION_HUB_LABEL`. */
    ATTESTATION_HUB_LABEL: z
      .string()
      .regex(/^[a-z0-9][a-z0-9._-]{0,39}$/, "lowercase letters, digits, '.', '_' or '-', at most 40")
      .default(DEFAULT_HUB_LABEL),
    /** The hub's full name, when not the one derived from the label, the L2 chain id and `ATTESTATION_VERIFIER`. */
    ATTESTATION_HUB_NAME: z.string().min(1).max(200).optional(),
    /**
     * `true` lets the node dial a ws:// (unencrypted) hub on another machine. Off by default: a man in the
     * middle could read and hold back its traffic (it cannot log in as the node, the login names the URL).
     */
    ATTESTATION_HUB_ALLOW_INSECURE: z
      .enum(["true", "false"])
      .default("false")
      .transform((value) => value === "true"),
    /** The AttestationVerifier contract: the EIP-712 domain's verifying contract (required with the hub URL). */
    ATTESTATION_VERIFIER: evmAddress.transform((value) => getAddress(value)).optional(),
    /**
     * Refuse to sign an Ethereum position more than this many blocks below the node's own head. What a
     * consumer checking `issuedAt` is told is fresh: the balance held at most this many blocks (12 s each)
     * before then. The hub pins its head less `ATTESTATION_EVM_CONFIRMATIONS` (3 by default), so 10 leaves
     * 7 blocks for two views of Ethereum's head to differ; it was 64 (almost 13 minutes).
     */
    ATTESTATION_MAX_BLOCK_LAG: z.coerce.number().int().min(0).default(DEFAULT_ATTESTATION_MAX_BLOCK_LAG),
    /**
     * Refuse to sign an issue time further than this behind the timestamp of the node's own latest L2
     * block. The hub pins the issue time to its L2 head's timestamp, so this is the tolerance between two
     * views of one chain's head, not between two wall clocks: they differ by the blocks one RPC lags the
     * other (2 s each on the L2) plus the node's one-second cache. Ahead of the head the node never accepts
     * more than the verifier's 4 s (`MAX_CLOCK_SKEW`), whatever this says: a later stamp would pass a
     * balance off as fresher than consumers are told it can be (signing-rules.ts).
     */
    ATTESTATION_MAX_CLOCK_SKEW_SECONDS: z.coerce.number().int().positive().default(10),
    /**
     * The L2's `QosReports`: with it the node is also a monitor (docs/verification.md, "What the nodes
     * measure"): it probes its sources (and the API, with `QOS_API_URL` and `QOS_API_KEY`) and reports.
     */
    QOS_REPORTS: evmAddress.transform((value) => getAddress(value)).optional(),
    /**
     * The L2's `RewardPools`: with it the node votes each ended epoch's rewards root (docs/verification.md,
     * "Epoch rewards"), checked every heartbeat interval.
     */
    REWARD_POOLS: evmAddress.transform((value) => getAddress(value)).optional(),
    /** The API the node probes, as integrators call it (`https://…`; the local stack's `http://127.0.0.1:…`). */
    QOS_API_URL: serviceUrl(/^https?$/).optional(),
    /** The node's own API key for its probes (never logged): a live operator asks the API's operator for one. */
    QOS_API_KEY: secret(z.string().min(1)).optional(),
    QOS_PROBE_INTERVAL_SECONDS: z.coerce.number().int().positive().default(60),
    /** How often the epoch's figures so far are published: each report is one transaction. */
    QOS_REPORT_INTERVAL_SECONDS: z.coerce.number().int().positive().default(3_600),
  })
  .superRefine((config, context) => {
    const urls = hubUrlsOf(config);
    if (config.ATTESTATION_HUB_URL !== undefined && config.ATTESTATION_HUB_URLS !== undefined)
      context.addIssue({
        code: "custom",
        path: ["ATTESTATION_HUB_URL"],
        message: "set ATTESTATION_HUB_URLS or ATTESTATION_HUB_URL, not both",
      });
    if (urls.length > 0 && config.ATTESTATION_VERIFIER === undefined)
      context.addIssue({
        code: "custom",
        path: ["ATTESTATION_VERIFIER"],
        message: "required when ATTESTATION_HUB_URLS is set (the EIP-712 domain the node signs under)",
      });
    if ((config.QOS_API_URL === undefined) !== (config.QOS_API_KEY === undefined))
      context.addIssue({
        code: "custom",
        path: [config.QOS_API_URL === undefined ? "QOS_API_URL" : "QOS_API_KEY"],
        message: "QOS_API_URL and QOS_API_KEY go together: the node probes the API with its own key",
      });
    for (const url of urls)
      if (!hubUrlAllowed(url, config.ATTESTATION_HUB_ALLOW_INSECURE))
        context.addIssue({
          code: "custom",
          path: [config.ATTESTATION_HUB_URLS === undefined ? "ATTESTATION_HUB_URL" : "ATTESTATION_HUB_URLS"],
          message: `${new URL(url).origin}: ws:// only to a loopback host (use wss://, or set ATTESTATION_HUB_ALLOW_INSECURE=true)`,
        });
  });

export type NodeConfig = Readonly<z.infer<typeof schema>>;

/** The hub URLs the node dials, in order: `ATTESTATION_HUB_URLS`, else `ATTESTATION_HUB_URL`, else none. */
export function hubUrlsOf(config: Pick<NodeConfig, "ATTESTATION_HUB_URLS" | "ATTESTATION_HUB_URL">): string[] {
  return config.ATTESTATION_HUB_URLS ?? (config.ATTESTATION_HUB_URL === undefined ? [] : [config.ATTESTATION_HUB_URL]);
}

/**
 * The hub name the node requires in a challenge: `ATTESTATION_HUB_NAME`, else the name derived from
 * `ATTESTATION_HUB_LABEL`, the L2 chain id and `ATTESTATION_VERIFIER`, as the API derives its own.
 */
export function expectedHubName(
  config: Pick<NodeConfig, "ATTESTATION_HUB_NAME" | "ATTESTATION_HUB_LABEL" | "ATTESTATION_VERIFIER">,
  chainId: bigint,
): string {
  if (config.ATTESTATION_HUB_NAME !== undefined) return config.ATTESTATION_HUB_NAME;
  if (config.ATTESTATION_VERIFIER === undefined) throw new Error("ATTESTATION_VERIFIER is required to derive the hub's name");
  return hubName(config.ATTESTATION_HUB_LABEL, chainId, config.ATTESTATION_VERIFIER);
}

/** Parses the node's configuration from the environment; every problem is listed at once. */
export function loadNodeConfig(env: NodeJS.ProcessEnv): NodeConfig {
  return parseEnvironment(schema, env, "node configuration");
}

/** The configuration as it may be logged: each URL by its origin (paths and queries carry API keys), bigints as strings. */
export function redactedNodeConfig(config: NodeConfig): Record<string, unknown> {
  return redactConfig(schema, config);
}

import type { FastifyBaseLogger, FastifyRequest } from "fastify";

import type { EvmBalanceReader } from "../../chains/evm/balance-reader.ts";
import type { ReorgWatch } from "../../chains/evm/reorg-watch.ts";
import type { JsonRpc } from "../../chains/evm/balance-slot.ts";
import type { SolanaBalanceReader } from "../../chains/solana/balance-reader.ts";
import type { AttestationService } from "../attestation-hub/attested-query.ts";
import type { VerifiedKey } from "../keys/api-keys.ts";
import type { NetworkService } from "../network/network-service.ts";
import type { SubscriptionRoutesDependencies } from "../webhooks/subscription-routes.ts";
import type { ApiMetrics } from "../metrics.ts";
import type { RateLimitStore, TokenBucketPolicy } from "../rate-limit/token-bucket.ts";

/** Rate-limit tokens an attested answer takes unless configured (`ATTEST_COST`). */
export const DEFAULT_ATTEST_COST = 5;

/** Whether `request` asks for an attested answer on a route that gives them: it is priced and metered apart. */
export function isAttestedRequest(request: FastifyRequest): boolean {
  return request.routeOptions.config.attestable === true && (request.query as { attest?: unknown } | undefined)?.attest === "true";
}

/**
 * Whether `request` asks for a storage proof (`?proof=true`) on a route that gives them: it is priced as an
 * attested answer (`attestCost`: the block, the access list, the slot and the proof are several upstream calls).
 */
export function isProofRequest(request: FastifyRequest): boolean {
  return request.routeOptions.config.provable === true && (request.query as { proof?: unknown } | undefined)?.proof === "true";
}

/** Where `?proof=true` reads: the L2 (whose L1Block names the L1 block) and the API's Ethereum source. */
export interface BalanceProofSources {
  /** The L2's JSON-RPC: `L1Block.number()` and `hash()` at its latest block. */
  l2: JsonRpc;
  /** The API's Ethereum source (the pool the balances are read through): block hash, access list, slot, proof. */
  ethereum: JsonRpc;
  /**
   * The L2's `L1BlockHashes` (`PROOF_L1_BLOCK_HASHES`): with it, proofs name its latest recorded block when
   * that is recent, which stays verifiable after `L1Block` moves on; without it, `L1Block`'s current one.
   */
  l1BlockHashes?: string;
}

/** What the server is built from: main.ts wires the real ones, the tests their own. */
export interface ApiServerDependencies {
  /** Resolves an API key to its id and quota, or undefined for an unknown or revoked key (KeyVerifier). */
  keys: KeyCheck;
  /**
   * The buckets and their policy; `attestCost` is the tokens an attested answer (`?attest=true`) takes,
   * since it asks every connected node (default `DEFAULT_ATTEST_COST`; one without the hub, whose answer
   * is a 501).
   */
  rateLimit: { store: RateLimitStore; policy: TokenBucketPolicy; attestCost?: number };
  evm: EvmBalanceReader;
  /** Sees Ethereum reorganize, so the result cache never reuses an answer of a replaced block (absent: not watched). */
  evmReorgs?: ReorgWatch;
  solana: SolanaBalanceReader;
  /** Whether each upstream answers now (`/readyz`). */
  checkUpstreams: () => Promise<Record<string, boolean>>;
  metrics: ApiMetrics;
  /** The attestation hub and its readers; without it `?attest=true` answers 501. */
  attestation?: AttestationService;
  /**
   * The storage proofs of `POST /api/ccq-evm?proof=true` (main.ts: `PROOF_L2_RPC_URL`, else
   * `ATTESTATION_L2_RPC_URL`); without it `?proof=true` answers 501.
   */
  proofs?: BalanceProofSources;
  /**
   * The L2 chain id a Solana owner's link message names (`POST /api/conditions` with both owners): main.ts
   * gives the hub's EIP-712 domain chain id, else `L2_CHAIN_ID`. Unset, the hub's is taken when there is a
   * hub; without either, a request naming both owners answers 501.
   */
  linkChainId?: bigint;
  /** The network's quality of service (`GET /api/network/nodes`); without it that route answers 501. */
  network?: NetworkService;
  /** The webhooks' subscriptions and deliveries (`/api/subscriptions…`); without them those routes are not served. */
  webhooks?: SubscriptionRoutesDependencies;
  bodyLimitBytes?: number;
  cacheTtlMs?: number;
  /** pino options or false; keys and URLs never reach the log either way. */
  logger?: boolean | Record<string, unknown>;
  /** A logger to use instead of `logger`'s options: main.ts gives the server its child of the process's one logger. */
  loggerInstance?: FastifyBaseLogger;
  /**
   * Usage metering and monthly quotas (UsageMeter): told once per answered request of a key to a single
   * route (`endpoint` is the route template, `status` the HTTP status, 429 included) and once per item of
   * a batch (the batch route's template and the item's status). Requests refused with 401 have no key and
   * are not told. Without it, no usage is counted and no quota applies.
   */
  usage?: UsageRecorder;
}

export interface KeyCheck {
  /** The key if it is remembered as live: the request path's synchronous fast path. */
  cached(key: string): VerifiedKey | undefined;
  /** The key as the key store knows it: undefined when unknown or revoked. */
  verify(key: string): Promise<VerifiedKey | undefined>;
}

export interface UsageRecorder {
  record(keyId: string, endpoint: string, status: number): void;
  /** Requests `key` may still make this month: Infinity without a quota, 0 or less when over it. */
  remainingQuota(key: VerifiedKey): number;
  /**
   * Undefined when `remainingQuota(key)` can be trusted now; otherwise (this process's first sight of a
   * key with a quota) a promise that settles once it can, and rejects when the key's month total cannot be
   * read. The server asks it before `remainingQuota`. A recorder that knows every total from the start
   * (a test's) need not have it.
   */
  whenQuotaKnown?(key: VerifiedKey): Promise<void> | undefined;
}

declare module "fastify" {
  interface FastifyContextConfig {
    /** The route answers only requests with a valid API key, within the key's rate limit. */
    requiresApiKey?: boolean;
    /** The route answers `?attest=true` (the single balance routes, conditions): such a request costs `attestCost` tokens. */
    attestable?: boolean;
    /** The route answers `?proof=true` (`POST /api/ccq-evm`): such a request costs `attestCost` tokens too. */
    provable?: boolean;
  }
  interface FastifyRequest {
    /** The request's API key once verified (`onRequest`); undefined before, and without one. */
    apiKey: VerifiedKey | undefined;
  }
}

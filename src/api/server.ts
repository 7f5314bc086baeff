import swagger from "@fastify/swagger";
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";

import type { EvmBalance, EvmBalanceReader } from "../chains/evm/balance-reader.ts";
import type { SolanaBalance, SolanaBalanceReader } from "../chains/solana/balance-reader.ts";
import { SourceError } from "../chains/rpc/errors.ts";
import { parseEvmAddress, parseSolanaAddress } from "./addresses.ts";
import { ATTESTATION_RESPONSES, attestationSchema, attestQuerySchema } from "./attestation-hub/openapi.ts";
import { attestEvm, attestSvm, type AttestationService } from "./attestation-hub/attested-query.ts";
import { ApiError, toApiError } from "./api-error.ts";
import {
  answerItems,
  ATTEST_NOT_SUPPORTED,
  BATCH_BODY_LIMIT_BYTES,
  BATCH_ERROR_RESPONSES,
  BATCH_SUCCESS_MESSAGE,
  batchBodyValidationSchema,
  batchQuerySchema,
  batchSuccessSchema,
  documentedBatchSchema,
  QUOTA_EXCEEDED_ENTRY,
  QUOTA_EXCEEDED_MESSAGE,
  RATE_LIMITED_ENTRY,
  validateItem,
  type BatchEntry,
  type BatchItemHandling,
  type ItemValidator,
} from "./batch.ts";
import type { VerifiedKey } from "./keys/api-keys.ts";
import type { ApiMetrics } from "./metrics.ts";
import { RateLimitStoreError } from "./rate-limit/redis-store.ts";
import { rateLimitHeaders, type RateLimitStore, type TokenBucketPolicy } from "./rate-limit/token-bucket.ts";
import { ResultCache } from "./result-cache.ts";

export interface ApiServerDependencies {
  /** Resolves an API key to its id and quota, or undefined for an unknown or revoked key (KeyVerifier). */
  keys: KeyCheck;
  rateLimit: { store: RateLimitStore; policy: TokenBucketPolicy };
  evm: EvmBalanceReader;
  solana: SolanaBalanceReader;
  /** Whether each upstream answers now (`/readyz`). */
  checkUpstreams: () => Promise<Record<string, boolean>>;
  metrics: ApiMetrics;
  /** The attestation hub and its readers; without it `?attest=true` answers 501. */
  attestation?: AttestationService;
  bodyLimitBytes?: number;
  cacheTtlMs?: number;
  /** pino options or false; keys and URLs never reach the log either way. */
  logger?: boolean | Record<string, unknown>;
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
}

declare module "fastify" {
  interface FastifyContextConfig {
    /** The route answers only requests with a valid API key, within the key's rate limit. */
    requiresApiKey?: boolean;
  }
  interface FastifyRequest {
    /** The request's API key once verified (`onRequest`); undefined before, and without one. */
    apiKey: VerifiedKey | undefined;
  }
}

const SUCCESS_MESSAGE = "Assets Fetched Successfully";
const errorSchema = {
  type: "object",
  properties: { status: { type: "integer" }, message: { type: "string" } },
  required: ["status", "message"],
} as const;
const ERROR_RESPONSES = {
  400: { description: "Malformed body, missing or malformed field, wrong Content-Type", ...errorSchema },
  401: { description: "Missing or unknown API key (checked first)", ...errorSchema },
  404: { description: "Well-formed address with no token there", ...errorSchema },
  429: { description: `"${RATE_LIMITED_ENTRY.message}" or "${QUOTA_EXCEEDED_MESSAGE}"; see Retry-After`, ...errorSchema },
  500: { description: "Unexpected failure, upstream down after retries and failover", ...errorSchema },
  ...ATTESTATION_RESPONSES,
} as const;
/** A single answer's `data`; a batch entry's `data` is the same without the attestation. */
const successDataSchema = (ownerField: string, queryResultPattern: string, attested: boolean) => ({
  type: "object",
  properties: {
    [ownerField]: { type: "string" },
    asset: {
      type: "object",
      properties: {
        // fast-json-stringify writes BigInt integers exactly, also above 2^53.
        balance: { type: "integer" },
        QueryResult: { type: "string", pattern: queryResultPattern },
      },
      required: ["balance", "QueryResult"],
    },
    // Only with ?attest=true; absent properties are not written, so other answers stay byte-for-byte.
    ...(attested ? { attestation: attestationSchema } : {}),
  },
  required: [ownerField, "asset"],
});
const successSchema = (ownerField: string, queryResultPattern: string) => ({
  description: SUCCESS_MESSAGE,
  type: "object",
  properties: {
    status: { type: "integer" },
    message: { type: "string" },
    data: successDataSchema(ownerField, queryResultPattern, true),
  },
  required: ["status", "message", "data"],
});
const bodySchema = (fields: [string, string]) => ({
  type: "object",
  properties: Object.fromEntries(fields.map((field) => [field, { type: "string", maxLength: 100 }])),
  required: fields,
  additionalProperties: false,
});

/**
 * `Authorization: <key>` or `Authorization: Bearer <key>`; undefined when the header is absent or blank.
 * Any other shape is returned whole, so it is an unknown key (401 "Unknown API key"), not a missing one.
 */
function presentedKey(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (typeof header !== "string" || header.trim() === "") return undefined;
  const match = /^\s*(?:Bearer\s+)?(\S+)\s*$/i.exec(header);
  return match?.[1] ?? header;
}

/** A JSON body in a charset other than UTF-8 would be decoded wrongly: refuse it (RFC 8259 JSON is UTF-8). */
function hasForeignCharset(contentType: string | undefined): boolean {
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType ?? "")?.[1];
  return charset !== undefined && !/^utf-?8$/i.test(charset);
}

/**
 * The verification API (DESIGN section 5): `POST /api/ccq-evm` and `POST /api/ccq-svm`, and their batch
 * forms `POST /api/ccq-evm/batch` and `POST /api/ccq-svm/batch` (up to 100 items at one position, see
 * batch.ts), behind API keys and per-key token-bucket rate limits, plus `/healthz`, `/readyz`, `/metrics`
 * and `/openapi.json`. Authentication runs on request arrival, before the body is read, so a missing or
 * unknown key is a 401 whatever else is wrong.
 */
export async function buildApiServer(deps: ApiServerDependencies): Promise<FastifyInstance> {
  const app = Fastify({
    logger: deps.logger ?? false,
    bodyLimit: deps.bodyLimitBytes ?? 4_096,
    // Strict body validation: a number where a string belongs is an error, not coerced.
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false } },
    frameworkErrors: (error, _request, reply) => sendError(reply, toApiError(error)),
  });
  // Only JSON bodies: without this, text/plain would be parsed and reach validation.
  app.removeContentTypeParser("text/plain");
  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: { title: "Asset verification API", version: "1.0.0", description: "What a wallet holds on Ethereum and Solana." },
      components: { securitySchemes: { apiKey: { type: "apiKey", in: "header", name: "Authorization" } } },
    },
  });

  const evmCache = new ResultCache<EvmBalance>(deps.cacheTtlMs ?? 2_000);
  const svmCache = new ResultCache<SolanaBalance>(deps.cacheTtlMs ?? 2_000);
  const { metrics } = deps;
  /**
   * The answer to `query` cached at the chain's `head` (block or slot), or a fresh read, stored under the
   * position it was read at: an answer is reused only while the chain stands still.
   */
  const readThrough = async <T>(cache: ResultCache<T>, chain: string, head: bigint, query: string, read: () => Promise<T>, positionOf: (value: T) => bigint) => {
    const cached = cache.get(`${head}:${query}`);
    metrics.recordCacheLookup(chain, cached !== undefined);
    if (cached !== undefined) return cached;
    const value = await read();
    cache.set(`${positionOf(value)}:${query}`, value);
    return value;
  };

  // Kept for usage, quotas and the batch routes' further tokens. A primitive default, so Fastify sets it
  // up in the request's constructor rather than adding a property per request.
  app.decorateRequest("apiKey", undefined);
  const { usage } = deps;
  /**
   * A verified key's request goes on when its key has quota left this month, then when its bucket has a
   * token. One token per request, before the body is read, also on the batch routes: a key with no token
   * left gets its 429 without the server parsing its body, and a batch refused as a whole (not an
   * array…) costs one token like any refused request. A batch takes its further items' tokens once it
   * knows how many there are (see admitBatchItems).
   */
  const admit = (request: FastifyRequest, reply: FastifyReply, key: VerifiedKey, done: (error?: Error) => void) => {
    request.apiKey = key;
    if (usage !== undefined && usage.remainingQuota(key) <= 0) return done(quotaExceeded());
    deps.rateLimit.store.take(key.id).then((decision) => {
      const headers = rateLimitHeaders(decision, deps.rateLimit.policy);
      if (!decision.allowed) return done(new ApiError(429, RATE_LIMITED_ENTRY.message, headers));
      reply.headers(headers);
      if (hasForeignCharset(request.headers["content-type"])) return done(new ApiError(400, "Content-Type must be application/json in UTF-8"));
      done();
    }, done);
  };
  // A callback hook, not an async one: see onResponse below.
  app.addHook("onRequest", (request, reply, done) => {
    // Decided on the matched route, not the raw URL: the router also matches encoded spellings of a
    // path (`/%61pi/…`) and absolute-form request targets, which must not get past the key check.
    if (request.routeOptions.config.requiresApiKey !== true) return done();
    const key = presentedKey(request);
    if (key === undefined) return done(new ApiError(401, "Missing API key"));
    // A remembered live key goes on in this turn; any other key is asked of the key store.
    const remembered = deps.keys.cached(key);
    if (remembered !== undefined) return admit(request, reply, remembered, done);
    deps.keys.verify(key).then((verified) => {
      if (verified === undefined) return done(new ApiError(401, "Unknown API key"));
      admit(request, reply, verified, done);
    }, done);
  });
  /** A batch's item statuses, once it is answered with its entries: usage counts its items, not it. */
  const batchItemStatuses = new WeakMap<FastifyRequest, number[]>();
  // The per-request hooks below take a callback rather than return a promise: each async hook costs
  // the request path a promise and a turn of the microtask queue.
  app.addHook("onResponse", (request, reply, done) => {
    const route = request.routeOptions.url ?? "unmatched";
    metrics.recordRequest(route, reply.statusCode, reply.elapsedTime / 1000);
    const keyId = request.apiKey?.id;
    if (usage !== undefined && keyId !== undefined) {
      try {
        const items = reply.statusCode === 200 ? batchItemStatuses.get(request) : undefined;
        if (items === undefined) usage.record(keyId, route, reply.statusCode);
        else for (const status of items) usage.record(keyId, route, status);
      } catch (error) {
        // The answer is sent; a failing meter must not turn into an unhandled error here.
        request.log.error({ failure: describeFailure(error) }, "usage not recorded");
      }
    }
    done();
  });
  // Graceful shutdown: requests in flight finish; their connections then close instead of idling in
  // keep-alive until the timeout (Node closes only the connections that are idle when close starts).
  let closing = false;
  app.addHook("preClose", async () => {
    closing = true;
  });
  app.addHook("onSend", (_request, reply, payload, done) => {
    if (closing) reply.header("connection", "close");
    done(null, payload);
  });
  app.setErrorHandler((error, request, reply) => {
    const apiError = toApiError(error);
    if (apiError.status === 503) request.log.warn({ reason: apiError.message }, "attestation not gathered");
    else if (apiError.status >= 500) request.log.error({ failure: describeFailure(error) }, "request failed");
    return sendError(reply, apiError);
  });
  app.setNotFoundHandler((_request, reply) => sendError(reply, new ApiError(404, "Not found")));

  const attestation = () => {
    if (deps.attestation === undefined) throw new ApiError(501, "Attested answers are not enabled on this server");
    return deps.attestation;
  };

  app.post<{ Body: { user_address: string; contract_address: string }; Querystring: { attest?: string } }>(
    "/api/ccq-evm",
    {
      config: { requiresApiKey: true },
      schema: {
        summary: "ERC-20 / ERC-721 balance of a wallet on Ethereum",
        security: [{ apiKey: [] }],
        querystring: attestQuerySchema,
        body: bodySchema(["user_address", "contract_address"]),
        response: { 200: successSchema("user_address", "^0x[0-9a-f]{64}$"), ...ERROR_RESPONSES },
      },
    },
    async (request) => {
      const owner = parseEvmAddress("user_address", request.body.user_address);
      const asset = parseEvmAddress("contract_address", request.body.contract_address);
      if (request.query.attest === "true") {
        const attested = await attestEvm(attestation(), owner, asset);
        return success("user_address", request.body.user_address, attested.balance, attested.queryResult, attested.attestation);
      }
      const head = await deps.evm.latestBlock();
      const result = await readThrough(evmCache, "evm", head, `${asset}:${owner}`, () => deps.evm.balanceOf(asset, owner), (read) => read.blockNumber);
      return success("user_address", request.body.user_address, result.balance, result.queryResult);
    },
  );

  app.post<{ Body: { owner_address: string; token_mint_address: string }; Querystring: { attest?: string } }>(
    "/api/ccq-svm",
    {
      config: { requiresApiKey: true },
      schema: {
        summary: "SPL token / Solana NFT balance of a wallet on Solana",
        security: [{ apiKey: [] }],
        querystring: attestQuerySchema,
        body: bodySchema(["owner_address", "token_mint_address"]),
        response: { 200: successSchema("owner_address", "^([0-9a-f]{2})*$"), ...ERROR_RESPONSES },
      },
    },
    async (request) => {
      const owner = parseSolanaAddress("owner_address", request.body.owner_address);
      const mint = parseSolanaAddress("token_mint_address", request.body.token_mint_address);
      if (request.query.attest === "true") {
        const attested = await attestSvm(attestation(), owner, mint);
        return success("owner_address", owner, attested.balance, attested.queryResult, attested.attestation);
      }
      const head = await deps.solana.latestSlot();
      const result = await readThrough(svmCache, "svm", head, `${mint}:${owner}`, () => deps.solana.balanceOf(owner, mint), (read) => read.slot);
      return success("owner_address", owner, result.balance, result.queryResult);
    },
  );

  /**
   * Which items of a batch go on, as `onRequest` decided for the first: those within the key's monthly
   * quota, then of those, as many as the bucket has tokens for (the first item's token is taken already;
   * the others' in one atomic take). The rest are refused with the single route's 429 entry: quota first,
   * as for a single request. The RateLimit headers then describe the bucket after the batch; no
   * Retry-After on this 200, even when its tail was refused (each refused item says 429 itself).
   */
  const admitBatchItems = async (request: FastifyRequest, reply: FastifyReply, items: number): Promise<(index: number) => BatchEntry | undefined> => {
    const withinQuota = Math.min(items, usage?.remainingQuota(request.apiKey!) ?? Infinity);
    let withinRateLimit = withinQuota;
    if (withinQuota > 1) {
      const decision = await deps.rateLimit.store.take(request.apiKey!.id, withinQuota - 1);
      reply.headers(rateLimitHeaders({ ...decision, allowed: true, granted: decision.granted + 1, retryAfterMs: 0 }, deps.rateLimit.policy));
      withinRateLimit = 1 + decision.granted;
    }
    return (index) => (index >= withinQuota ? QUOTA_EXCEEDED_ENTRY : index >= withinRateLimit ? RATE_LIMITED_ENTRY : undefined);
  };
  /**
   * Registers a batch route: every batch runs the same steps (attest refused, items admitted, one
   * position read, the items answered at it); `spec` says how its chain pins that position and how an
   * item is checked, read and answered.
   */
  const batchRoute = <Query, Value>(spec: {
    url: string;
    summary: string;
    description: string;
    /** The single route's body schema, which each item is checked against. */
    itemSchema: object;
    positionField: string;
    positionDescription: string;
    /** A 200 entry's `data` (the single route's, without the attestation). */
    dataSchema: object;
    /** The position (block, slot) every item of a batch is read at. */
    position: () => Promise<bigint>;
    /** How items are handled at `position`; `validate` throws the single route's 400 for a bad item. */
    items: (position: bigint, validate: (item: unknown) => void) => Omit<BatchItemHandling<Query, Value>, "onFailure">;
  }) => {
    const schema = {
      summary: spec.summary,
      description: spec.description,
      security: [{ apiKey: [] }],
      querystring: batchQuerySchema,
      body: batchBodyValidationSchema,
      response: { 200: batchSuccessSchema(spec.positionField, spec.positionDescription, spec.dataSchema), ...BATCH_ERROR_RESPONSES },
    };
    const options = {
      bodyLimit: BATCH_BODY_LIMIT_BYTES,
      config: {
        requiresApiKey: true,
        // /openapi.json shows the item shape that each item is checked against (see batchBodyValidationSchema).
        swaggerTransform: ({ url }: { url: string }) => ({ schema: documentedBatchSchema(schema, spec.itemSchema), url }),
      },
      schema,
    };
    app.post<{ Body: unknown[]; Querystring: { attest?: string } }>(spec.url, options, async (request, reply) => {
      if (request.query.attest !== undefined && request.query.attest !== "false") throw new ApiError(400, ATTEST_NOT_SUPPORTED);
      const items = request.body;
      const refusal = await admitBatchItems(request, reply, items.length);
      const validator = request.compileValidationSchema(spec.itemSchema) as ItemValidator;
      const position = await spec.position();
      const results = await answerItems(items, refusal, {
        ...spec.items(position, (item) => validateItem(validator, item)),
        onFailure: (error) => request.log.error({ failure: describeFailure(error) }, "batch item failed"),
      });
      batchItemStatuses.set(request, results.map((entry) => entry.status));
      return { status: 200, message: BATCH_SUCCESS_MESSAGE, data: { [spec.positionField]: position, results } };
    });
  };

  batchRoute({
    url: "/api/ccq-evm/batch",
    summary: "Up to 100 ERC-20 / ERC-721 balances on Ethereum, all at one block",
    description: "Each item is answered as POST /api/ccq-evm would answer it; data.blockNumber is the block every item was read at.",
    itemSchema: bodySchema(["user_address", "contract_address"]),
    positionField: "blockNumber",
    positionDescription: "The Ethereum block every item was read at",
    dataSchema: successDataSchema("user_address", "^0x[0-9a-f]{64}$", false),
    position: () => deps.evm.latestBlock(),
    items: (block, validate) => ({
      parse: (item) => {
        validate(item);
        const body = item as { user_address: string; contract_address: string };
        const owner = parseEvmAddress("user_address", body.user_address);
        const asset = parseEvmAddress("contract_address", body.contract_address);
        const key = `${asset}:${owner}`;
        return { key, query: { owner, asset, key } };
      },
      read: ({ owner, asset, key }) =>
        readThrough(evmCache, "evm", block, key, () => deps.evm.balanceOf(asset, owner, block), (read) => read.blockNumber),
      // The owner as the item spelled it, as the single route echoes it.
      answer: (item, _query, value) => success("user_address", (item as { user_address: string }).user_address, value.balance, value.queryResult),
    }),
  });

  batchRoute({
    url: "/api/ccq-svm/batch",
    summary: "Up to 100 SPL token / Solana NFT balances on Solana, all at or after one finalized slot",
    description: "Each item is answered as POST /api/ccq-svm would answer it; every item was read at data.slot or later.",
    itemSchema: bodySchema(["owner_address", "token_mint_address"]),
    positionField: "slot",
    positionDescription: "The finalized Solana slot every item was read at or after (minContextSlot)",
    dataSchema: successDataSchema("owner_address", "^([0-9a-f]{2})*$", false),
    position: () => deps.solana.latestSlot(),
    items: (slot, validate) => ({
      parse: (item) => {
        validate(item);
        const body = item as { owner_address: string; token_mint_address: string };
        const owner = parseSolanaAddress("owner_address", body.owner_address);
        const mint = parseSolanaAddress("token_mint_address", body.token_mint_address);
        const key = `${mint}:${owner}`;
        return { key, query: { owner, mint, key } };
      },
      // A cached answer serves only when it was read at the pinned slot itself: the single route's rule.
      read: ({ owner, mint, key }) =>
        readThrough(svmCache, "svm", slot, key, () => deps.solana.balanceOf(owner, mint, { minContextSlot: slot }), (read) => read.slot),
      answer: (_item, query, value) => success("owner_address", query.owner, value.balance, value.queryResult),
    }),
  });

  deps.attestation?.hub.register(app);
  app.get("/healthz", { schema: { hide: true } }, async () => ({ status: "ok" }));
  app.get("/readyz", { schema: { hide: true } }, async (_request, reply) => {
    const upstreams = await deps.checkUpstreams();
    const ready = Object.values(upstreams).every(Boolean);
    return reply.code(ready ? 200 : 503).send({ status: ready ? "ready" : "not ready", upstreams });
  });
  app.get("/metrics", { schema: { hide: true } }, async (_request, reply) =>
    reply.type(metrics.registry.contentType).send(await metrics.exposition()),
  );
  app.get("/openapi.json", { schema: { hide: true } }, async () => app.swagger());
  return app;
}

function success(ownerField: string, owner: string, balance: bigint, queryResult: string, attestation?: unknown) {
  const data = { [ownerField]: owner, asset: { balance, QueryResult: queryResult } };
  return { status: 200, message: SUCCESS_MESSAGE, data: attestation === undefined ? data : { ...data, attestation } };
}

/**
 * What the log may say about a failure: our own errors' messages (written without URLs or keys) and the
 * class name and code of anything else. Upstream messages are left out: a provider may echo a URL.
 */
function describeFailure(error: unknown): Record<string, unknown> {
  if (error instanceof SourceError || error instanceof RateLimitStoreError) return { type: error.name, message: error.message };
  const { name, code } = (error ?? {}) as { name?: unknown; code?: unknown };
  return { type: typeof name === "string" ? name : typeof error, ...(code === undefined ? {} : { code: String(code) }) };
}

/** Over its monthly quota, a key can try again when the next calendar month (UTC) begins. */
function quotaExceeded(now = Date.now()): ApiError {
  const today = new Date(now);
  const nextMonth = Date.UTC(today.getUTCFullYear(), today.getUTCMonth() + 1, 1);
  return new ApiError(429, QUOTA_EXCEEDED_MESSAGE, { "retry-after": String(Math.ceil((nextMonth - now) / 1000)) });
}

function sendError(reply: FastifyReply, error: ApiError): FastifyReply {
  return reply
    .code(error.status)
    .headers(error.headers)
    .type("application/json")
    .send({ status: error.status, message: error.message });
}

import swagger from "@fastify/swagger";
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";

import type { EvmBalance, EvmBalanceReader } from "../chains/evm/balance-reader.ts";
import type { SolanaBalance, SolanaBalanceReader } from "../chains/solana/balance-reader.ts";
import { SourceError } from "../chains/rpc/errors.ts";
import { parseEvmAddress, parseSolanaAddress } from "./addresses.ts";
import { ATTESTATION_RESPONSES, attestationSchema, attestQuerySchema } from "./attestation-hub/openapi.ts";
import { attestEvm, attestSvm, type AttestationService } from "./attestation-hub/attested-query.ts";
import { ApiError, toApiError } from "./api-error.ts";
import type { ApiMetrics } from "./metrics.ts";
import { RateLimitStoreError } from "./rate-limit/redis-store.ts";
import { rateLimitHeaders, type RateLimitStore, type TokenBucketPolicy } from "./rate-limit/token-bucket.ts";
import { ResultCache } from "./result-cache.ts";

export interface ApiServerDependencies {
  /** Resolves an API key to its id, or undefined for an unknown or revoked key. */
  verifyKey: (key: string) => string | undefined;
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
}

declare module "fastify" {
  interface FastifyContextConfig {
    /** The route answers only requests with a valid API key, within the key's rate limit. */
    requiresApiKey?: boolean;
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
  429: { description: "Rate limit exceeded; see Retry-After", ...errorSchema },
  500: { description: "Unexpected failure, upstream down after retries and failover", ...errorSchema },
  ...ATTESTATION_RESPONSES,
} as const;
const successSchema = (ownerField: string, queryResultPattern: string) => ({
  description: SUCCESS_MESSAGE,
  type: "object",
  properties: {
    status: { type: "integer" },
    message: { type: "string" },
    data: {
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
        attestation: attestationSchema,
      },
      required: [ownerField, "asset"],
    },
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
 * The verification API (DESIGN section 5): `POST /api/ccq-evm` and `POST /api/ccq-svm`, behind API keys
 * and per-key token-bucket rate limits, plus `/healthz`, `/readyz`, `/metrics` and `/openapi.json`.
 * Authentication runs on request arrival, before the body is read, so a missing or unknown key is a
 * 401 whatever else is wrong.
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

  // A callback hook, not an async one: see onResponse below.
  app.addHook("onRequest", (request, reply, done) => {
    // Decided on the matched route, not the raw URL: the router also matches encoded spellings of a
    // path (`/%61pi/…`) and absolute-form request targets, which must not get past the key check.
    if (request.routeOptions.config.requiresApiKey !== true) return done();
    const key = presentedKey(request);
    const keyId = key === undefined ? undefined : deps.verifyKey(key);
    if (keyId === undefined) return done(new ApiError(401, key === undefined ? "Missing API key" : "Unknown API key"));
    deps.rateLimit.store.take(keyId).then((decision) => {
      const headers = rateLimitHeaders(decision, deps.rateLimit.policy);
      if (!decision.allowed) return done(new ApiError(429, "Rate limit exceeded", headers));
      reply.headers(headers);
      if (hasForeignCharset(request.headers["content-type"])) return done(new ApiError(400, "Content-Type must be application/json in UTF-8"));
      done();
    }, done);
  });
  // The per-request hooks below take a callback rather than return a promise: each async hook costs
  // the request path a promise and a turn of the microtask queue.
  app.addHook("onResponse", (request, reply, done) => {
    metrics.recordRequest(request.routeOptions.url ?? "unmatched", reply.statusCode, reply.elapsedTime / 1000);
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

  deps.attestation?.hub.register(app);
  app.get("/healthz", { schema: { hide: true } }, async () => ({ status: "ok" }));
  app.get("/readyz", { schema: { hide: true } }, async (_request, reply) => {
    const upstreams = await deps.checkUpstreams();
    const ready = Object.values(upstreams).every(Boolean);
    return reply.code(ready ? 200 : 503).send({ status: ready ? "ready" : "not ready", upstreams });
  });
  app.get("/metrics", { schema: { hide: true } }, async (_request, reply) =>
    reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()),
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

function sendError(reply: FastifyReply, error: ApiError): FastifyReply {
  return reply
    .code(error.status)
    .headers(error.headers)
    .type("application/json")
    .send({ status: error.status, message: error.message });
}

import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";

import { ApiError } from "../api-error.ts";
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
  batchBeyondQuota,
  batchBeyondTokens,
  batchLargerThanBucket,
  PARTIAL_INVALID,
  QUOTA_EXCEEDED_ENTRY,
  RATE_LIMITED_ENTRY,
  validateItem,
  type BatchEntry,
  type ItemValidator,
} from "../batch.ts";
import { rateLimitHeaders } from "../rate-limit/token-bucket.ts";
import { PROOF_NOT_SUPPORTED_ON_BATCH } from "./balance-proof-route.ts";
import type { BalanceBody, BalanceChain } from "./chains.ts";
import type { ApiServerDependencies } from "./dependencies.ts";
import { secondsToNextMonth } from "./key-check.ts";
import { failureFields } from "../failure-log.ts";
import type { BatchItemStatuses } from "./request-accounting.ts";
import { bodySchema, success, successDataSchema, withWallets } from "./responses.ts";

export interface BatchRouteContext extends Pick<ApiServerDependencies, "rateLimit" | "usage"> {
  recordItemStatuses: BatchItemStatuses;
}

/**
 * Registers a chain's batch route (`POST /api/ccq-evm/batch`, `POST /api/ccq-svm/batch`): attest
 * refused, items admitted, one position read, every item answered at it as the single route would
 * answer it (batch.ts holds the wire format and the item handling).
 */
export function registerBatchRoute<
  Query extends { key: string },
  Value extends { balance: bigint; queryResult: string; wallets?: string[] },
>(app: FastifyInstance, chain: BalanceChain<Query, Value>, context: BatchRouteContext): void {
  const { positionField } = chain.batch;
  /** The single route's body schema, which each item is checked against. */
  const itemSchema = bodySchema(chain.wire.body);
  const schema = {
    summary: chain.batch.summary,
    description: chain.batch.description,
    security: [{ apiKey: [] }],
    querystring: batchQuerySchema,
    body: batchBodyValidationSchema,
    response: {
      // A 200 entry's `data` is the single route's, without the attestation.
      200: batchSuccessSchema(
        positionField,
        chain.batch.positionDescription,
        successDataSchema(chain.wire.data, { attested: false, provable: false }),
      ),
      ...BATCH_ERROR_RESPONSES,
    },
  };
  const options = {
    bodyLimit: BATCH_BODY_LIMIT_BYTES,
    config: {
      requiresApiKey: true,
      // /openapi.json shows the item shape that each item is checked against (see batchBodyValidationSchema).
      swaggerTransform: ({ url }: { url: string }) => ({ schema: documentedBatchSchema(schema, itemSchema), url }),
    },
    schema,
  };
  app.post<{ Body: unknown[]; Querystring: { attest?: string; proof?: string; partial?: string } }>(
    `${chain.url}/batch`,
    options,
    async (request, reply) => {
      if (request.query.attest !== undefined && request.query.attest !== "false") throw new ApiError(400, ATTEST_NOT_SUPPORTED);
      if (request.query.proof !== undefined && request.query.proof !== "false") throw new ApiError(400, PROOF_NOT_SUPPORTED_ON_BATCH);
      const { partial } = request.query;
      if (partial !== undefined && partial !== "true" && partial !== "false") throw new ApiError(400, PARTIAL_INVALID);
      const items = request.body;
      const refusal =
        partial === "true"
          ? await admitAffordableItems(context, request, reply, items.length)
          : await admitWholeBatch(context, request, reply, items.length);
      const validator = request.compileValidationSchema(itemSchema) as ItemValidator;
      const position = await chain.head();
      const results = await answerItems(items, refusal, {
        parse: (item) => {
          validateItem(validator, item);
          const query = chain.parse(item as BalanceBody);
          const proofOnly = chain.proofOnly(query);
          if (proofOnly !== undefined) throw new ApiError(400, proofOnly);
          return { key: query.key, query };
        },
        read: (query) => chain.cache.get(position, query.key, () => chain.read(query, position)),
        answer: (item, query, value) =>
          withWallets(success(chain.echo(item as BalanceBody, query), value.balance, value.queryResult), value),
        onFailure: (error) => request.log.error({ failure: failureFields(error) }, "batch item failed"),
      });
      context.recordItemStatuses(
        request,
        results.map((entry) => entry.status),
      );
      return { status: 200, message: BATCH_SUCCESS_MESSAGE, data: { [positionField]: position, results } };
    },
  );
}

/**
 * The default rule (docs/api.md, "Batch endpoints"): a batch is answered whole or refused whole. It goes
 * on when the key's monthly quota has every item left and its bucket has a token for every item, taken in
 * one all-or-nothing step (the first item's token was taken on arrival, like any request's); otherwise it
 * is a 429 with nothing answered and no further token taken: the quota's (Retry-After: the next month),
 * a batch larger than the bucket can ever hold (no Retry-After: waiting cannot help; send fewer items),
 * or not enough tokens now (Retry-After: when they will all be there).
 */
async function admitWholeBatch(
  context: BatchRouteContext,
  request: FastifyRequest,
  reply: FastifyReply,
  items: number,
): Promise<(index: number) => BatchEntry | undefined> {
  const { rateLimit, usage } = context;
  const remaining = usage?.remainingQuota(request.apiKey!) ?? Infinity;
  if (items > remaining) throw new ApiError(429, batchBeyondQuota(items, remaining), { "retry-after": String(secondsToNextMonth()) });
  const { capacity } = rateLimit.policy;
  if (items > capacity) throw new ApiError(429, batchLargerThanBucket(items, capacity));
  if (items > 1) {
    const decision = await rateLimit.store.take(request.apiKey!.id, items - 1, "all");
    const headers = rateLimitHeaders(decision, rateLimit.policy);
    if (!decision.allowed) throw new ApiError(429, batchBeyondTokens(items), headers);
    reply.headers(headers);
  }
  return () => undefined;
}

/**
 * With `?partial=true`, which items of a batch go on, as `onRequest` decided for the first: those within
 * the key's monthly quota, then of those, as many as the bucket has tokens for (the first item's token is
 * taken already; the others' in one atomic take). The rest are refused with the single route's 429 entry:
 * quota first, as for a single request. The RateLimit headers then describe the bucket after the batch;
 * no Retry-After on this 200, even when its tail was refused (each refused item says 429 itself).
 */
async function admitAffordableItems(
  context: BatchRouteContext,
  request: FastifyRequest,
  reply: FastifyReply,
  items: number,
): Promise<(index: number) => BatchEntry | undefined> {
  const { rateLimit, usage } = context;
  const withinQuota = Math.min(items, usage?.remainingQuota(request.apiKey!) ?? Infinity);
  let withinRateLimit = withinQuota;
  if (withinQuota > 1) {
    const decision = await rateLimit.store.take(request.apiKey!.id, withinQuota - 1);
    reply.headers(rateLimitHeaders({ ...decision, allowed: true, granted: decision.granted + 1, retryAfterMs: 0 }, rateLimit.policy));
    withinRateLimit = 1 + decision.granted;
  }
  return (index) => (index >= withinQuota ? QUOTA_EXCEEDED_ENTRY : index >= withinRateLimit ? RATE_LIMITED_ENTRY : undefined);
}

/**
 * The batch endpoints' wire format and item handling (`POST /api/ccq-evm/batch`, `POST /api/ccq-svm/batch`;
 * docs/api.md, "Batch endpoints"). The routes themselves are registered by server/batch-route.ts, with
 * the single routes' schemas, cache and error mapping.
 */
import type { FastifySchema } from "fastify";

import { ApiError, toApiError } from "./api-error.ts";

/** Most items in one batch. */
export const MAX_BATCH_ITEMS = 100;

/**
 * The batch routes' body limit. An item with both fields at their 100-character maximum is about 245
 * bytes of compact JSON, so 100 of them take about 25 KB; 64 KiB leaves room for the same batch
 * pretty-printed. The server's default limit (4 KiB, meant for one item) would not hold 20 such items.
 */
export const BATCH_BODY_LIMIT_BYTES = 64 * 1024;

export const BATCH_SUCCESS_MESSAGE = "Batch Processed Successfully";
/** A batch item beyond the tokens the key had: the single routes' 429 message, as an entry. */
export const RATE_LIMITED_ENTRY = { status: 429, message: "Rate limit exceeded" } as const;
export const QUOTA_EXCEEDED_MESSAGE = "Monthly quota exceeded";
/** A batch item beyond the key's monthly quota: the single routes' 429 message, as an entry. */
export const QUOTA_EXCEEDED_ENTRY = { status: 429, message: QUOTA_EXCEEDED_MESSAGE } as const;
export const ATTEST_NOT_SUPPORTED = "attest is not supported on batch requests";
export const PARTIAL_INVALID = 'partial must be "true" or "false"';

/** A batch refused whole: more items than the key's bucket holds at all (waiting cannot help). */
export function batchLargerThanBucket(items: number, capacity: number): string {
  return `A batch of ${items} items needs ${items} rate-limit tokens and this key's bucket holds ${capacity}: send at most ${capacity} items, or add ?partial=true`;
}

/** A batch refused whole: more items than the tokens the key has now (Retry-After says when they will be there). */
export function batchBeyondTokens(items: number): string {
  return `Rate limit exceeded: a batch of ${items} items needs ${items} tokens at once; retry after Retry-After, or add ?partial=true`;
}

/** A batch refused whole: more items than the key's monthly quota has left. */
export function batchBeyondQuota(items: number, remaining: number): string {
  return `Monthly quota exceeded: a batch of ${items} items and ${remaining} left this month; send at most ${remaining} items, or add ?partial=true`;
}

/** One entry of `data.results`: exactly what the single endpoint answers for that item. */
export interface BatchEntry {
  status: number;
  message: string;
  data?: unknown;
}

const errorSchema = {
  type: "object",
  properties: { status: { type: "integer" }, message: { type: "string" } },
  required: ["status", "message"],
} as const;

/**
 * What the route itself validates: a JSON array of 1 to 100 items, whatever they hold. Each item is then
 * checked on its own against the single route's body schema, so that a bad item is a 400 entry rather
 * than a 400 for the whole batch.
 */
export const batchBodyValidationSchema = {
  type: "array",
  minItems: 1,
  maxItems: MAX_BATCH_ITEMS,
} as const;

/** The body as /openapi.json shows it: the same array, with the item shape (the single route's body). */
export function batchBodyDocumentation(itemSchema: object) {
  return {
    ...batchBodyValidationSchema,
    description: `1 to ${MAX_BATCH_ITEMS} queries, each the single endpoint's body; at most ${BATCH_BODY_LIMIT_BYTES} bytes`,
    items: itemSchema,
  };
}

/**
 * `attest` is accepted only to refuse it with a clear message (attested batches are not offered).
 * `partial=true` asks for what the key can afford now: items beyond its quota or tokens are answered with
 * 429 entries instead of the whole batch being refused.
 */
export const batchQuerySchema = {
  type: "object",
  properties: {
    attest: { type: "string", description: `Not supported on batch requests: anything but "false" answers 400 "${ATTEST_NOT_SUPPORTED}"` },
    partial: {
      type: "string",
      description:
        "Without it (or false), a batch is admitted whole or refused whole with 429 (Retry-After when waiting will do). " +
        "With true, the items within the key's monthly quota and rate-limit tokens are answered and the rest get 429 entries.",
    },
  },
} as const;

/**
 * The 200 answer: the pinned position (`positionField`, an exact JSON integer) and one entry per item in
 * order. An entry's `data` is the single route's `data` (written only on a 200 entry: fast-json-stringify
 * leaves absent properties out), so every entry is byte-for-byte the single route's answer. One object
 * schema rather than a oneOf of success and error: fast-json-stringify picks a oneOf branch by validating
 * with ajv, which does not count a BigInt balance as an integer and would drop `data`.
 */
export function batchSuccessSchema(positionField: string, positionDescription: string, itemDataSchema: object) {
  return {
    description: BATCH_SUCCESS_MESSAGE,
    type: "object",
    properties: {
      status: { type: "integer" },
      message: { type: "string" },
      data: {
        type: "object",
        properties: {
          [positionField]: { type: "integer", description: positionDescription },
          results: {
            type: "array",
            description: "One entry per item, in order: the single endpoint's answer for it (its status, message and, on 200, data)",
            items: {
              type: "object",
              properties: { status: { type: "integer" }, message: { type: "string" }, data: itemDataSchema },
              required: ["status", "message"],
            },
          },
        },
        required: [positionField, "results"],
      },
    },
    required: ["status", "message", "data"],
  };
}

export const BATCH_ERROR_RESPONSES = {
  400: {
    description: "Body not a JSON array of 1 to 100 items, too large, wrong Content-Type, attest requested, or partial not true or false",
    ...errorSchema,
  },
  401: { description: "Missing or unknown API key (checked first)", ...errorSchema },
  429: {
    description:
      `The key's monthly quota is used up ("${QUOTA_EXCEEDED_MESSAGE}") or not a single token left; without ?partial=true also a batch ` +
      "with more items than the quota has left or the bucket has tokens for (refused whole, nothing answered); see Retry-After",
    ...errorSchema,
  },
  500: { description: "The pinned position (block, slot) could not be read", ...errorSchema },
} as const;

/** An ajv validation function as Fastify compiles it (`request.compileValidationSchema`). */
export type ItemValidator = ((value: unknown) => boolean | Promise<unknown>) & {
  errors?: ReadonlyArray<{ instancePath?: string; message?: string }> | null;
};

/**
 * Checks one item against the single route's body schema, compiled by the same Fastify validator
 * compiler (same ajv options), and throws the 400 the single route would answer, word for word: Fastify's
 * default error text (`body` + path + ajv message, joined by ", ") behind toApiError's "Invalid request: ".
 */
export function validateItem(validate: ItemValidator, item: unknown): void {
  if (validate(item) === true) return;
  const text = (validate.errors ?? []).map((error) => `body${error.instancePath ?? ""} ${error.message ?? "is invalid"}`).join(", ");
  throw new ApiError(400, `Invalid request: ${text}`);
}

export interface BatchItemHandling<Query, Value> {
  /** Validates an item and makes its query, with a key equal for items asking the same thing; throws for a 400. */
  parse(item: unknown): { key: string; query: Query };
  /** Reads one distinct query (cache, then the pinned source). */
  read(query: Query): Promise<Value>;
  /** The 200 entry for an item whose query was read. */
  answer(item: unknown, query: Query, value: Value): BatchEntry;
  /** Told of each distinct read that failed unexpectedly (a 500 entry), to log it. */
  onFailure(error: unknown): void;
}

/**
 * The entries of a batch: `refusal(index)` is the 429 entry of an item beyond the key's quota or rate
 * limit, undefined for an item that goes on. Items asking the same thing are read once; every read starts
 * at once (the EVM reader gathers them into one aggregate3) and a failed read is an entry, never a
 * failure of the batch.
 */
export async function answerItems<Query, Value>(
  items: readonly unknown[],
  refusal: (index: number) => BatchEntry | undefined,
  handling: BatchItemHandling<Query, Value>,
): Promise<BatchEntry[]> {
  const reads = new Map<string, Promise<{ value: Value } | { error: ApiError }>>();
  // Async so that every item is a promise; its body up to the read still runs at once, in item order,
  // so identical items find each other's read.
  const pending = items.map(async (item, index): Promise<BatchEntry> => {
    const refused = refusal(index);
    if (refused !== undefined) return refused;
    let parsed: { key: string; query: Query };
    try {
      parsed = handling.parse(item);
    } catch (error) {
      return errorEntry(toApiError(error));
    }
    let read = reads.get(parsed.key);
    if (read === undefined) {
      read = handling.read(parsed.query).then(
        (value) => ({ value }),
        (error: unknown) => {
          const apiError = toApiError(error);
          if (apiError.status >= 500) handling.onFailure(error);
          return { error: apiError };
        },
      );
      reads.set(parsed.key, read);
    }
    return read.then((outcome) => ("error" in outcome ? errorEntry(outcome.error) : handling.answer(item, parsed.query, outcome.value)));
  });
  return Promise.all(pending);
}

function errorEntry(error: ApiError): BatchEntry {
  return { status: error.status, message: error.message };
}

/** The route schema /openapi.json shows: the documented body instead of the validated one. */
export function documentedBatchSchema(schema: FastifySchema, itemSchema: object): FastifySchema {
  return { ...schema, body: batchBodyDocumentation(itemSchema) };
}

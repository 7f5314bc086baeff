import type { FastifyReply } from "fastify";

import { attestationSchema, ATTESTATION_RESPONSES } from "../attestation-hub/openapi.ts";
import type { ApiError } from "../api-error.ts";
import { QUOTA_EXCEEDED_MESSAGE, RATE_LIMITED_ENTRY } from "../batch.ts";

// The single routes' wire format as JSON schemas: Fastify validates bodies and
// serializes answers with them, and /openapi.json documents them.

export const SUCCESS_MESSAGE = "Assets Fetched Successfully";

const errorSchema = {
  type: "object",
  properties: { status: { type: "integer" }, message: { type: "string" } },
  required: ["status", "message"],
} as const;

export const ERROR_RESPONSES = {
  400: { description: "Malformed body, missing or malformed field, wrong Content-Type", ...errorSchema },
  401: { description: "Missing or unknown API key (checked first)", ...errorSchema },
  404: { description: "Well-formed address with no token there", ...errorSchema },
  429: { description: `"${RATE_LIMITED_ENTRY.message}" or "${QUOTA_EXCEEDED_MESSAGE}"; see Retry-After`, ...errorSchema },
  500: { description: "Unexpected failure, upstream down after retries and failover", ...errorSchema },
  ...ATTESTATION_RESPONSES,
} as const;

/** A single answer's `data`; a batch entry's `data` is the same without the attestation. */
export const successDataSchema = (ownerField: string, queryResultPattern: string, attested: boolean) => ({
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

export const successSchema = (ownerField: string, queryResultPattern: string) => ({
  description: SUCCESS_MESSAGE,
  type: "object",
  properties: {
    status: { type: "integer" },
    message: { type: "string" },
    data: successDataSchema(ownerField, queryResultPattern, true),
  },
  required: ["status", "message", "data"],
});

export const bodySchema = (fields: readonly [string, string]) => ({
  type: "object",
  properties: Object.fromEntries(fields.map((field) => [field, { type: "string", maxLength: 100 }])),
  required: fields,
  additionalProperties: false,
});

/** A 200 answer of a single route, or a batch entry's (without the attestation). */
export function success(ownerField: string, owner: string, balance: bigint, queryResult: string, attestation?: unknown) {
  const data = { [ownerField]: owner, asset: { balance, QueryResult: queryResult } };
  return { status: 200, message: SUCCESS_MESSAGE, data: attestation === undefined ? data : { ...data, attestation } };
}

/** Every error answer, whichever hook or handler refuses: `{ status, message }` with the error's headers. */
export function sendError(reply: FastifyReply, error: ApiError): FastifyReply {
  return reply.code(error.status).headers(error.headers).type("application/json").send({ status: error.status, message: error.message });
}

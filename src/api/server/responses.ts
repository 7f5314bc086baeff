import type { FastifyReply } from "fastify";

import { attestationSchema, ATTESTATION_RESPONSES } from "../attestation-hub/openapi.ts";
import type { ApiError } from "../api-error.ts";
import { proofSchema, type BalanceProofJson } from "./proof-schema.ts";
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
  400: {
    description: "Malformed body, missing or malformed field (token_id missing for an ERC-1155 contract), wrong Content-Type",
    ...errorSchema,
  },
  401: { description: "Missing or unknown API key (checked first)", ...errorSchema },
  404: { description: "Well-formed address with no token there", ...errorSchema },
  429: { description: `"${RATE_LIMITED_ENTRY.message}" or "${QUOTA_EXCEEDED_MESSAGE}"; see Retry-After`, ...errorSchema },
  500: { description: "Unexpected failure, upstream down after retries and failover", ...errorSchema },
  ...ATTESTATION_RESPONSES,
} as const;

/** Optional string fields of a route's body (name → description), echoed in `data` when given. */
export type OptionalFields = Readonly<Record<string, string>>;

/**
 * A single answer's `data`; a batch entry's `data` is the same without the attestation. `echoed` are the
 * body's optional fields, repeated when the request gave them.
 */
export const successDataSchema = (ownerField: string, queryResultPattern: string, attested: boolean, echoed: OptionalFields = {}) => ({
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
    // Absent unless asked for (absent properties are not written): other answers stay byte-for-byte. Listed
    // after `asset` because that is where they are written: fast-json-stringify writes required properties first.
    ...Object.fromEntries(Object.entries(echoed).map(([field, description]) => [field, { type: "string", description }])),
    // Only with ?attest=true; absent properties are not written, so other answers stay byte-for-byte.
    ...(attested ? { attestation: attestationSchema } : {}),
  },
  required: [ownerField, "asset"],
});

/** A single route's 200; `provable`: its `data` may carry `proof` (`?proof=true`, the EVM route). */
export const successSchema = (ownerField: string, queryResultPattern: string, echoed: OptionalFields = {}, provable = false) => {
  const data = successDataSchema(ownerField, queryResultPattern, true, echoed);
  return {
    description: SUCCESS_MESSAGE,
    type: "object",
    properties: {
      status: { type: "integer" },
      message: { type: "string" },
      data: provable ? { ...data, properties: { ...data.properties, proof: proofSchema } } : data,
    },
    required: ["status", "message", "data"],
  };
};

/**
 * The two required fields (owner, asset) and the optional ones; nothing else is accepted. Every field is a
 * string of at most 100 characters here; its format is checked when the chain parses it, with a message
 * naming the field.
 */
export const bodySchema = (fields: readonly [string, string], optional: OptionalFields = {}) => ({
  type: "object",
  properties: {
    ...Object.fromEntries(fields.map((field) => [field, { type: "string", maxLength: 100 }])),
    ...Object.fromEntries(Object.entries(optional).map(([field, description]) => [field, { type: "string", maxLength: 100, description }])),
  },
  required: fields,
  additionalProperties: false,
});

/**
 * A 200 answer of a single route, or a batch entry's (without the attestation): `echo` is what `data`
 * repeats of the request (the owner under its field, and `token_id` when asked); `attestation` with
 * `?attest=true`, `proof` (null included) with `?proof=true`. The serializer decides the order of the keys
 * (successDataSchema).
 */
export function success(
  echo: Readonly<Record<string, string>>,
  balance: bigint,
  queryResult: string,
  attestation?: unknown,
  proof?: BalanceProofJson | null,
) {
  const data = { ...echo, asset: { balance, QueryResult: queryResult } };
  const withAttestation = attestation === undefined ? data : { ...data, attestation };
  return { status: 200, message: SUCCESS_MESSAGE, data: proof === undefined ? withAttestation : { ...withAttestation, proof } };
}

/** Every error answer, whichever hook or handler refuses: `{ status, message }` with the error's headers. */
export function sendError(reply: FastifyReply, error: ApiError): FastifyReply {
  return reply.code(error.status).headers(error.headers).type("application/json").send({ status: error.status, message: error.message });
}

import type { FastifyReply } from "fastify";

import { attestationSchema, ATTESTATION_RESPONSES } from "../attestation-hub/openapi.ts";
import type { ApiError } from "../api-error.ts";
import type { z } from "zod";

import { proofSchema, type BalanceProofJson } from "./proof-schema.ts";
import { routeSchema } from "../route-schema.ts";
import { QUOTA_EXCEEDED_MESSAGE, RATE_LIMITED_ENTRY } from "../batch.ts";

// The single routes' wire format as JSON schemas, generated from the wire contract's zod schemas: Fastify
// validates bodies and serializes answers with them, and /openapi.json documents them.

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

/**
 * A single answer's `data`, generated from the route's schema in the wire contract (`@avn/protocol/balance-wire`):
 * with the attestation (`?attest=true`) and its export's call (`&eas=true`) when `attested`, else without (a batch entry's), and with the proof
 * (`?proof=true`) only when `provable`. Optional properties are written only when present (fast-json-stringify
 * writes the required ones first, then the others in this order), so other answers stay byte-for-byte.
 */
export function successDataSchema(data: z.core.$ZodType, { attested, provable }: { attested: boolean; provable: boolean }) {
  const generated = routeSchema(data);
  const { attestation: _attestation, eas, proof: _proof, ...properties } = generated.properties;
  return {
    ...generated,
    properties: {
      ...properties,
      // The same schema, generated from the kind, with what a reader needs to verify it.
      ...(attested && "attestation" in generated.properties ? { attestation: attestationSchema } : {}),
      ...(attested && eas !== undefined ? { eas } : {}),
      ...(provable && "proof" in generated.properties ? { proof: proofSchema } : {}),
    },
  };
}

/** A single route's 200; `provable`: its `data` may carry `proof` (`?proof=true`, the EVM route). */
export function successSchema(data: z.core.$ZodType, provable = false) {
  return {
    description: SUCCESS_MESSAGE,
    type: "object",
    properties: {
      status: { type: "integer" },
      message: { type: "string" },
      data: successDataSchema(data, { attested: true, provable }),
    },
    required: ["status", "message", "data"],
  };
}

/**
 * A route's body: the owner and asset fields and the optional ones, nothing else accepted, each a string of
 * at most 100 characters (generated from the wire contract); its format is checked when the chain parses it,
 * with a message naming the field.
 */
export function bodySchema(body: z.core.$ZodType) {
  return routeSchema(body, "input");
}

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

/** `answer` with `data.wallets` when `value` counted delegations (`include_delegations`), else as it is. */
export function withWallets<Answer extends { data: object }>(answer: Answer, value: { wallets?: string[] }): Answer {
  return value.wallets === undefined ? answer : { ...answer, data: { ...answer.data, wallets: value.wallets } };
}

/** Every error answer, whichever hook or handler refuses: `{ status, message }` with the error's headers. */
export function sendError(reply: FastifyReply, error: ApiError): FastifyReply {
  return reply.code(error.status).headers(error.headers).type("application/json").send({ status: error.status, message: error.message });
}

import { conditionKind } from "@avn/protocol/attestation-kinds";
import { MAX_CONDITION_DEPTH, MAX_CONDITION_LEAVES } from "@avn/protocol/conditions";

import { conditionDataSchema } from "@avn/protocol/condition-wire";
import { attestedAnswerSchema } from "../attestation-hub/openapi.ts";
import { routeSchema } from "../route-schema.ts";

import { ERROR_RESPONSES } from "./responses.ts";
import { easQueryProperty } from "./eas-export.ts";

// `POST /api/conditions`'s wire format as JSON schemas: the answer's (Fastify serializes it with them,
// integers exactly) and the body's as /openapi.json shows it. The body is validated only as an object:
// its checks are parseConditionRequest's, whose messages name the offending part by its path.

export const CONDITION_SUCCESS_MESSAGE = "Condition Evaluated";

const decimal = (description: string) => ({ type: "string", pattern: "^[0-9]{1,78}$", description }) as const;
const evmAddress = { type: "string", pattern: "^0x[0-9a-fA-F]{40}$" } as const;
const solanaAddress = { type: "string", pattern: "^[1-9A-HJ-NP-Za-km-z]{32,44}$" } as const;

/** The body as Fastify checks it: an object; the rest is parseConditionRequest's. */
export const conditionBodyValidationSchema = { type: "object" } as const;

const bounds = {
  min: decimal('Inclusive lower bound in raw base units (default "1": holds at least one unit)'),
  max: decimal("Inclusive upper bound in raw base units, not below min (default: none)"),
} as const;

/** A child of a combinator, documented once: the same shapes as `condition` itself. */
const childNode = { type: "object", description: "A condition node: any shape condition takes (a combinator or a leaf)" } as const;
const childList = { type: "array", minItems: 1, maxItems: MAX_CONDITION_LEAVES, items: childNode } as const;

const conditionDocumentation = {
  description:
    `A tree of combinators over leaves: at most ${MAX_CONDITION_LEAVES} leaves and ${MAX_CONDITION_DEPTH} combinators above any leaf. ` +
    'Its normal form (addresses in lower case, decimals without leading zeros, each leaf\'s min, "1" by default) canonicalised ' +
    "with RFC 8785 and hashed with keccak-256 is data.conditionHash.",
  oneOf: [
    { type: "object", title: "all", properties: { all: childList }, required: ["all"], additionalProperties: false },
    { type: "object", title: "any", properties: { any: childList }, required: ["any"], additionalProperties: false },
    {
      type: "object",
      title: "atLeast",
      properties: { atLeast: { type: "integer", minimum: 1, description: "From 1 to the length of of" }, of: childList },
      required: ["atLeast", "of"],
      additionalProperties: false,
    },
    { type: "object", title: "not", properties: { not: childNode }, required: ["not"], additionalProperties: false },
    {
      type: "object",
      title: "ethereum leaf",
      description: "ERC-20 / ERC-721 balanceOf(owners.ethereum), or ERC-1155 balanceOf(owners.ethereum, token_id)",
      properties: {
        chain: { type: "string", const: "ethereum" },
        contract_address: { ...evmAddress, description: "All lower case, all upper case, or a valid EIP-55 checksum" },
        token_id: decimal("ERC-1155 token id (below 2^256); without it, an ERC-20 / ERC-721 balance"),
        ...bounds,
      },
      required: ["chain", "contract_address"],
      additionalProperties: false,
    },
    {
      type: "object",
      title: "solana leaf",
      description: "SPL Token / Token-2022 balance of owners.solana for the mint, summed over its token accounts",
      properties: { chain: { type: "string", const: "solana" }, token_mint_address: solanaAddress, ...bounds },
      required: ["chain", "token_mint_address"],
      additionalProperties: false,
    },
  ],
} as const;

/** The body as /openapi.json documents it. */
export const conditionBodyDocumentation = {
  type: "object",
  properties: {
    owners: {
      type: "object",
      description: "The wallets the leaves are read for: at least one; every leaf's chain must have its owner",
      properties: { ethereum: evmAddress, solana: solanaAddress },
      additionalProperties: false,
    },
    condition: conditionDocumentation,
    links: {
      type: "object",
      description:
        "Required when both owners are given, refused otherwise: proof that one holder controls both wallets. solana is owners.solana's " +
        'ed25519 signature (base58) of the UTF-8 text "Asset Verification Network: link <owners.ethereum, EIP-55 checksummed> on chain <L2 chain id>"',
      properties: { solana: { type: "string", pattern: "^[1-9A-HJ-NP-Za-km-z]{64,88}$" } },
      additionalProperties: false,
    },
    reveal: { type: "boolean", description: "false: the answer leaves out data.leaves (each leaf's balance); default true" },
  },
  required: ["owners", "condition"],
  additionalProperties: false,
} as const;

export const conditionQuerySchema = {
  type: "object",
  properties: {
    attest: {
      type: "string",
      enum: ["true", "false"],
      description:
        "true: add data.attestation, the EIP-712 ConditionAttestation over the verdict signed by a quorum of live licensed circuit nodes. " +
        "Takes ATTEST_COST rate-limit tokens (default 5) at once, or none and 429",
    },
    ...easQueryProperty,
  },
} as const;

/** `data.attestation` of an attested verdict. */
export const conditionAttestationSchema = attestedAnswerSchema(
  conditionKind,
  "Only with ?attest=true. Verify on-chain with AttestationVerifier.isConditionAttestationValid(message, signatures, maxAge).",
);

/**
 * `data`, generated from the wire contract (`@avn/protocol/condition-wire`). A leaf is one object schema for
 * both chains, not a oneOf: fast-json-stringify picks a oneOf branch by validating with ajv, which does not
 * count a BigInt balance as an integer. Its properties are written in their order, absent ones left out; the
 * serializer's copy lists none as required, since fast-json-stringify writes required properties first (the
 * documented copy has them).
 */
function conditionDataRouteSchema(documented: boolean) {
  const generated = routeSchema(conditionDataSchema);
  const leaves = generated.properties.leaves as { items: { required?: string[] } };
  const { required: leafRequired, ...leafItems } = leaves.items;
  return {
    ...generated,
    properties: {
      ...generated.properties,
      leaves: { ...leaves, items: documented ? { ...leafItems, required: leafRequired } : leafItems },
      // Only with ?attest=true (absent properties are not written): the same schema, with how to verify it.
      attestation: conditionAttestationSchema,
      // (data.eas, with &eas=true, is the wire contract's as generated.)
    },
  };
}

const successSchema = (documented: boolean) => ({
  description: CONDITION_SUCCESS_MESSAGE,
  type: "object",
  properties: { status: { type: "integer" }, message: { type: "string" }, data: conditionDataRouteSchema(documented) },
  required: ["status", "message", "data"],
});

/** The 200 answer as Fastify serializes it. */
export const conditionSuccessSchema = successSchema(false);
/** …and as /openapi.json documents it (with each leaf's always-present properties marked required). */
export const documentedConditionSuccessSchema = successSchema(true);

export const CONDITION_ERROR_RESPONSES = {
  ...ERROR_RESPONSES,
  400: {
    ...ERROR_RESPONSES[400],
    description:
      "Malformed body or condition (the message starts with the path of the offending part, e.g. condition.all[1].min), " +
      "or links.solana not the Solana owner's signature of the link message (the message quotes the text to sign)",
  },
  404: { ...ERROR_RESPONSES[404], description: "A leaf's asset is not there (no contract code, not a token, no mint account)" },
  501: {
    ...ERROR_RESPONSES[501],
    description: "?attest=true without the attestation hub, or both owners named on a server that knows no L2 chain id (L2_CHAIN_ID)",
  },
} as const;

import { z } from "zod";

import { balanceKind, type AnyAttestationKind } from "@avn/protocol/attestation-kinds";

/** The OpenAPI / serializer schemas of `?attest=true` (docs/api.md, "Attested answers"). */

const errorSchema = {
  type: "object",
  properties: { status: { type: "integer" }, message: { type: "string" } },
  required: ["status", "message"],
} as const;

export const attestQuerySchema = {
  type: "object",
  properties: {
    attest: {
      type: "string",
      enum: ["true", "false"],
      description:
        "true: add data.attestation, the EIP-712 BalanceAttestation signed by a quorum of live licensed circuit nodes. Takes ATTEST_COST rate-limit tokens (default 5) at once, or none and 429",
    },
  },
} as const;

const decimal = { type: "string", pattern: "^[0-9]+$" } as const;

/**
 * `data.attestation` of a kind (`@avn/protocol/attestation-kinds`): its domain, its struct's message and
 * the signatures. `domain` and `message` go to viem's or ethers' typed-data verification as they are. The
 * message's schema is generated from the kind's own (zod), the one the hub checks the nodes' frames with,
 * so a field added there shows here and in /openapi.json.
 */
export function attestedAnswerSchema(kind: AnyAttestationKind, description: string) {
  const { $schema: _dialect, ...message } = z.toJSONSchema(kind.messageSchema, { io: "output", target: "draft-7" });
  return {
    type: "object",
    description:
      `${description} Each signature is EIP-712 over ${kind.primaryType}(${kind.structName} attestation,uint256[] licenseIds) with the message ` +
      `{attestation: message, licenseIds: that signature's licenseIds} (viem's primaryType: ${kind.primaryType}) under domain.`,
    properties: {
      domain: {
        type: "object",
        properties: {
          name: { type: "string" },
          version: { type: "string" },
          chainId: { type: "integer" },
          verifyingContract: { type: "string" },
        },
        required: ["name", "version", "chainId", "verifyingContract"],
      },
      message: { ...message, description: `${kind.structType}; integers as decimal strings` },
      signatures: {
        type: "array",
        items: {
          type: "object",
          description:
            "One node's signature over the message and its own licenseIds, exactly in this order (the list is signed: it cannot be changed)",
          properties: { signer: { type: "string" }, licenseIds: { type: "array", items: decimal }, signature: { type: "string" } },
          required: ["signer", "licenseIds", "signature"],
        },
      },
    },
    required: ["domain", "message", "signatures"],
  } as const;
}

/** A balance's `data.attestation`. */
export const attestationSchema = attestedAnswerSchema(
  balanceKind,
  "Only with ?attest=true. Verify on-chain with AttestationVerifier.isAttestationValid(message, signatures, maxAge).",
);

export const ATTESTATION_RESPONSES = {
  501: { description: "?attest=true on a server whose attestation hub is not configured", ...errorSchema },
  503: { description: "?attest=true and no quorum of node signatures within the deadline; see Retry-After", ...errorSchema },
} as const;

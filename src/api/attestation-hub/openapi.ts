import { attestationJsonSchema, balanceKind, type AttestationKind } from "@avn/protocol/attestation-kinds";
import { routeSchema, type JsonSchemaObject } from "../route-schema.ts";

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

/**
 * `data.attestation` of a kind (`@avn/protocol/attestation-kinds`): its domain, its struct's message and
 * the signatures. `domain` and `message` go to viem's or ethers' typed-data verification as they are. The
 * whole schema is generated from the kind's zod schema (`attestationJsonSchema`), the one the SDK checks
 * answers with; its message schema is the one the hub checks the nodes' frames with. A field added there
 * shows here and in /openapi.json with no other edit.
 */
export function attestedAnswerSchema<Message>(
  kind: Pick<AttestationKind<unknown, Message>, "messageSchema" | "primaryType" | "structName" | "structType">,
  description: string,
) {
  const schema = routeSchema(attestationJsonSchema(kind)) as JsonSchemaObject & {
    properties: { message: object; signatures: { items: object } };
  };
  return {
    ...schema,
    description:
      `${description} Each signature is EIP-712 over ${kind.primaryType}(${kind.structName} attestation,uint256[] licenseIds) with the message ` +
      `{attestation: message, licenseIds: that signature's licenseIds} (viem's primaryType: ${kind.primaryType}) under domain.`,
    properties: {
      ...schema.properties,
      message: { ...schema.properties.message, description: `${kind.structType}; integers as decimal strings` },
      signatures: {
        ...schema.properties.signatures,
        items: {
          ...schema.properties.signatures.items,
          description:
            "One node's signature over the message and its own licenseIds, exactly in this order (the list is signed: it cannot be changed)",
        },
      },
    },
  };
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

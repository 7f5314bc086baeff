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
const bytes32 = { type: "string", pattern: "^0x[0-9a-f]{64}$" } as const;

/** `data.attestation`: `domain` and `message` go to viem's or ethers' typed-data verification as they are. */
export const attestationSchema = {
  type: "object",
  description:
    "Only with ?attest=true. Verify on-chain with AttestationVerifier.isAttestationValid(message, signatures, maxAge). Off-chain, each signature is EIP-712 over " +
    "LicensedBalanceAttestation(BalanceAttestation attestation,uint256[] licenseIds) with the message {attestation: message, licenseIds: that signature's licenseIds} " +
    "(viem's primaryType: LicensedBalanceAttestation) under domain.",
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
    message: {
      type: "object",
      description:
        "BalanceAttestation(uint8 chain,bytes32 owner,bytes32 asset,uint256 balance,bytes32 queryResultHash,uint64 sourceBlock,uint64 issuedAt); integers as decimal strings",
      properties: {
        chain: { type: "string", enum: ["0", "1"] },
        owner: bytes32,
        asset: bytes32,
        balance: decimal,
        queryResultHash: bytes32,
        sourceBlock: decimal,
        issuedAt: decimal,
      },
      required: ["chain", "owner", "asset", "balance", "queryResultHash", "sourceBlock", "issuedAt"],
    },
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

export const ATTESTATION_RESPONSES = {
  501: { description: "?attest=true on a server whose attestation hub is not configured", ...errorSchema },
  503: { description: "?attest=true and no quorum of node signatures within the deadline; see Retry-After", ...errorSchema },
} as const;

// The wire shape of `?proof=true`: the JSON of a storage proof and the route schemas that describe it,
// apart from the route that builds proofs, so the responses' schemas read it without importing the route.

/** `data.proof`: the block and slot it proves at, and the bytes `verifyBalance` takes. */
export interface BalanceProofJson {
  /** The L1 block (the L2's `L1Block.number()`); a JSON integer. */
  blockNumber: bigint;
  /** Its hash (`L1Block.hash()`), which the proof's block header hashes to. */
  blockHash: string;
  /** The token's balances mapping slot, a decimal string (ERC-7201 slots are near 2^256, beyond a JSON float). */
  balancesSlot: string;
  /** `0x…`: `verifyBalance(token, owner, balancesSlot, maxAge, encoded)`'s proof argument. */
  encoded: string;
}

export const proofQueryProperty = {
  proof: {
    type: "string",
    enum: ["true", "false"],
    description:
      "true: read the balance at the Ethereum block the rollup's L1Block knows and add data.proof, for StorageProofVerifier.verifyBalance. " +
      "Not with attest=true nor token_id. Takes ATTEST_COST rate-limit tokens (default 5) at once, or none and 429",
  },
} as const;

/** `data.proof` (null for a zero balance). */
export const proofSchema = {
  type: ["object", "null"],
  description:
    "Only with ?proof=true. Verify on the L2 with StorageProofVerifier.verifyBalance(contract_address, user_address, balancesSlot, maxAge, encoded): " +
    "it returns the balance. Null when the balance is 0 (an unwritten slot has no inclusion proof)",
  properties: {
    blockNumber: { type: "integer" },
    blockHash: { type: "string", pattern: "^0x[0-9a-f]{64}$" },
    balancesSlot: { type: "string", pattern: "^[0-9]+$" },
    encoded: { type: "string", pattern: "^0x([0-9a-f]{2})*$" },
  },
  required: ["blockNumber", "blockHash", "balancesSlot", "encoded"],
} as const;

export const PROOF_RESPONSES = {
  422: { description: "?proof=true for a token whose balance is not a mapping keyed by the owner (rebasing, computed balances)" },
} as const;

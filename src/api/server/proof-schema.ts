// The wire shape of `?proof=true`: the JSON of a storage proof and the route schemas that describe it,
// apart from the route that builds proofs, so the responses' schemas read it without importing the route.
import { balanceProofJsonSchema } from "@avn/protocol/balance-wire";

import { routeSchema } from "../route-schema.ts";

/** `data.proof`: the block and slot it proves at, and the bytes `verifyBalance` takes (`@avn/protocol/balance-wire`). */
export type { BalanceProofJson } from "@avn/protocol/balance-wire";

export const proofQueryProperty = {
  proof: {
    type: "string",
    enum: ["true", "false"],
    description:
      "true: read the balance at the Ethereum block the rollup's L1Block knows and add data.proof, for StorageProofVerifier.verifyBalance. " +
      "Not with attest=true nor token_id. Takes ATTEST_COST rate-limit tokens (default 5) at once, or none and 429",
  },
} as const;

/** `data.proof` (null for a zero balance), generated from the wire contract's schema. */
export const proofSchema = {
  ...routeSchema(balanceProofJsonSchema),
  type: ["object", "null"],
  description:
    "Only with ?proof=true. Verify on the L2 with StorageProofVerifier.verifyBalance(contract_address, user_address, balancesSlot, maxAge, encoded): " +
    "it returns the balance. Null when the balance is 0 (an unwritten slot has no inclusion proof)",
};

export const PROOF_RESPONSES = {
  422: { description: "?proof=true for a token whose balance is not a mapping keyed by the owner (rebasing, computed balances)" },
} as const;

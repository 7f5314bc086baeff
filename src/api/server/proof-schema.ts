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
      "true: read the balance at the Ethereum block the rollup's L1Block knows (or at the body's block_number, one of the 8,191 blocks before it) " +
      "and add data.proof, for StorageProofVerifier.verifyBalance. " +
      "Not with attest=true nor token_id. Takes ATTEST_COST rate-limit tokens (default 5) at once, or none and 429",
  },
} as const;

/** `data.proof`, generated from the wire contract's schema. */
export const proofSchema = {
  ...routeSchema(balanceProofJsonSchema),
  description:
    "Only with ?proof=true. Verify on the L2 with StorageProofVerifier.verifyBalance(contract_address, user_address, balancesSlot, maxAge, encoded): " +
    "it returns the balance and blockNumber. A balance of 0 has an exclusion proof (included: false)",
};

export const PROOF_RESPONSES = {
  422: {
    description:
      "?proof=true for a token whose balance is not a mapping keyed by the owner (rebasing, computed balances), " +
      "or a block_number after the L1 block the rollup knows or more than 8,191 blocks before it",
  },
} as const;

import { z } from "zod/mini";

import { conditionAttestationJsonSchema } from "./attestation-kinds.ts";
import { easExportJsonSchema } from "./eas.ts";
import { jsonInteger } from "./balance-wire.ts";

/**
 * `POST /api/conditions`' answer (`data`) as a zod schema: the API generates its route schema and
 * `/openapi.json` from it, and the SDK's `ConditionData` is inferred from it. (The request is checked by
 * `parseConditionRequest`, which also puts it in its normal form.)
 */

const bytes32 = (description: string) => z.string().check(z.regex(/^0x[0-9a-f]{64}$/), z.describe(description));

/** One leaf as read (`data.leaves[i]`): the leaf in its normal form, with what was read and whether it holds. */
export const leafReadingJsonSchema = z.object({
  chain: z.enum(["ethereum", "solana"]),
  contract_address: z.optional(z.string().check(z.describe("Ethereum leaves: the contract, in lower case"))),
  token_mint_address: z.optional(z.string().check(z.describe("Solana leaves: the mint"))),
  token_id: z.optional(z.string().check(z.describe("ERC-1155 leaves: the token id, normalised"))),
  min: z.string(),
  max: z.optional(z.string()),
  delegations: z.optional(z.literal(true).check(z.describe("Ethereum leaves: the balance counts the wallets that delegated to the owner"))),
  balance: jsonInteger.check(z.describe("The raw balance, base units: an exact JSON integer")),
  QueryResult: z.string().check(z.describe("As the balance routes write it for this chain")),
  holds: z.boolean().check(z.describe("min ≤ balance (≤ max)")),
});
export type ConditionLeafJson = z.infer<typeof leafReadingJsonSchema>;

/** `data` of `POST /api/conditions` (docs/conditions.md). */
export const conditionDataSchema = z.object({
  verdict: z.boolean(),
  conditionHash: bytes32(
    "keccak-256 of the condition's normal form in RFC 8785 canonical JSON (conditionHash in @avn/protocol/conditions)",
  ),
  ownersHash: bytes32("keccak256(abi.encode(bytes32 ethereumOwner, bytes32 solanaOwner)), an absent owner zero"),
  sourceBlocks: z
    .object({
      ethereum: z.optional(jsonInteger.check(z.describe("The block every Ethereum leaf was read at"))),
      solana: z.optional(jsonInteger.check(z.describe("The slot every Solana leaf was read at or after (minContextSlot)"))),
    })
    .check(z.describe("Where the leaves were read: only the chains the condition reads")),
  leaves: z.optional(
    z.array(leafReadingJsonSchema).check(z.describe('Each leaf in order of appearance (depth first); absent with "reveal": false')),
  ),
  attestation: z.optional(conditionAttestationJsonSchema),
  eas: z.optional(easExportJsonSchema),
});
export type ConditionData = z.infer<typeof conditionDataSchema>;

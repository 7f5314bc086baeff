import { z } from "zod/mini";

import { balanceAttestationJsonSchema } from "./attestation-kinds.ts";
import { easExportJsonSchema } from "./eas.ts";

/**
 * The balance routes' wire contract (`POST /api/ccq-evm`, `POST /api/ccq-svm` and their batches): the bodies
 * and the answers' `data`, as zod schemas. The API generates its Fastify route schemas and `/openapi.json`
 * from them; the SDK's types are inferred from them. A field added here shows in both with no other edit.
 */

/**
 * An integer written as a JSON number, exactly: a `number` up to 2^53, a `bigint` beyond. The API writes
 * bigints as JSON integers, and the SDK parses integers beyond 2^53 as bigints. In JSON Schema it is one
 * `{"type": "integer"}` (`jsonIntegerJsonSchema`), which the API's serializer writes exactly.
 */
export const jsonInteger = z.union([z.int(), z.bigint()]);
export type JsonInteger = z.infer<typeof jsonInteger>;
/** What `jsonInteger` is in JSON Schema (zod has no JSON Schema for a bigint: generators put this in its place). */
export const jsonIntegerJsonSchema = { type: "integer" } as const;

/** Every body field is a string of at most 100 characters; its format is checked when the API parses it, with a message naming the field. */
const bodyField = z.string().check(z.maxLength(100));

export const TOKEN_ID_DESCRIPTION =
  "ERC-1155: the token id, a decimal string (digits only, at most 78, below 2^256; leading zeros accepted), echoed normalised. " +
  "Not with ?attest=true. Without it, the ERC-20 / ERC-721 balanceOf(owner)";

export const INCLUDE_DELEGATIONS_DESCRIPTION =
  "true: also count what the wallets that delegated to user_address through delegate.xyz v2 hold (whole wallet, contract, " +
  "ERC-721 token, ERC-20 / ERC-1155 amount; empty rights only), read at the same block; data.wallets lists them. " +
  'Not with ?attest=true or ?proof=true (a signed answer counting delegations is a verdict: a condition leaf\'s "delegations": true)';

export const BLOCK_NUMBER_DESCRIPTION =
  "Only with ?proof=true: the Ethereum block to read and prove the balance at, one of the 8,191 blocks before the one the rollup's L1Block knows " +
  "(proven through EIP-2935's history contract), or that block itself. A JSON integer, or a decimal string. Without it, the block the L2 knows";

/** `POST /api/ccq-evm`'s body (and each item of its batch); nothing else is accepted. */
export const evmBalanceBodySchema = z.strictObject({
  user_address: bodyField,
  contract_address: bodyField,
  token_id: z.optional(bodyField.check(z.describe(TOKEN_ID_DESCRIPTION))),
  // Any number here, so that a fraction or a negative one gets the parser's message naming the rule, not the schema's.
  block_number: z.optional(z.union([z.number(), bodyField]).check(z.describe(BLOCK_NUMBER_DESCRIPTION))),
  include_delegations: z.optional(z.boolean().check(z.describe(INCLUDE_DELEGATIONS_DESCRIPTION))),
});
export type EvmBalanceBody = z.infer<typeof evmBalanceBodySchema>;

/** `POST /api/ccq-svm`'s body (and each item of its batch). */
export const svmBalanceBodySchema = z.strictObject({ owner_address: bodyField, token_mint_address: bodyField });
export type SvmBalanceBody = z.infer<typeof svmBalanceBodySchema>;

/** `data.asset`: the raw balance (base units) and the raw query result, in the chain's own spelling. */
function assetSchema(queryResult: RegExp, description: string) {
  return z.object({ balance: jsonInteger, QueryResult: z.string().check(z.regex(queryResult), z.describe(description)) });
}
const evmAssetSchema = assetSchema(/^0x[0-9a-f]{64}$/, "0x + the 32-byte balanceOf word");
const svmAssetSchema = assetSchema(/^([0-9a-f]{2})*$/, "Lower-case hex (no 0x) of the owner's token accounts' data, or empty");
export type AssetJson = z.infer<typeof evmAssetSchema>;

/** `data.proof` of `POST /api/ccq-evm?proof=true` (docs/proofs.md): the block and slot it proves at, and the bytes `verifyBalance` takes. */
export const balanceProofJsonSchema = z.object({
  blockNumber: jsonInteger.check(z.describe("The L1 block proven at: the L2's L1Block.number() or a recorded block, or block_number")),
  blockHash: z.string().check(z.regex(/^0x[0-9a-f]{64}$/), z.describe("Its hash, which the proof's block header hashes to")),
  anchorBlockNumber: z.optional(
    jsonInteger.check(z.describe("With block_number: the block the L2 knows, whose EIP-2935 history contract holds blockHash")),
  ),
  balancesSlot: z
    .string()
    .check(z.regex(/^[0-9]+$/), z.describe("The token's balances mapping slot, a decimal string (ERC-7201 slots are near 2^256)")),
  included: z.boolean().check(z.describe("true: an inclusion proof of the balance's slot; false: an exclusion proof (a balance of 0)")),
  encoded: z.string().check(z.regex(/^0x([0-9a-f]{2})*$/), z.describe("StorageProofVerifier.verifyBalance's proof argument")),
});
export type BalanceProofJson = z.infer<typeof balanceProofJsonSchema>;

/** `data` of `POST /api/ccq-evm`; a batch entry's is the same without `attestation`, `eas` and `proof`. */
export const evmBalanceDataSchema = z.object({
  user_address: z.string(),
  asset: evmAssetSchema,
  wallets: z.optional(
    z
      .array(z.string())
      .check(
        z.describe(
          "With include_delegations: the wallets that delegated to user_address for this asset, whose holdings the balance counts",
        ),
      ),
  ),
  token_id: z.optional(z.string().check(z.describe("ERC-1155: the token id asked, normalised (only when the request named one)"))),
  attestation: z.optional(balanceAttestationJsonSchema),
  eas: z.optional(easExportJsonSchema),
  proof: z.optional(balanceProofJsonSchema),
});
export type EvmBalanceData = z.infer<typeof evmBalanceDataSchema>;

/** `data` of `POST /api/ccq-svm`; a batch entry's is the same without `attestation` and `eas`. */
export const svmBalanceDataSchema = z.object({
  owner_address: z.string(),
  asset: svmAssetSchema,
  attestation: z.optional(balanceAttestationJsonSchema),
  eas: z.optional(easExportJsonSchema),
});
export type SvmBalanceData = z.infer<typeof svmBalanceDataSchema>;

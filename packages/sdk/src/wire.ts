import type { JsonInteger } from "./json.ts";

/**
 * The API's answers as the client parses them (docs/api.md, /openapi.json): field names as the wire writes
 * them, integers as `JsonInteger` (a bigint beyond 2^53). The client's results convert the fields one uses;
 * these types describe `response`, the whole envelope, for anything else.
 */

/** Every answer: `{status, message, data}` on success (`status` repeats the HTTP status). */
export interface ApiEnvelope<Data> {
  status: JsonInteger;
  message: string;
  data: Data;
}

/**
 * `data.asset`, `data.proof` and the balance routes' `data`: inferred from the wire contract's zod schemas
 * (`@avn/protocol/balance-wire`), which the API's route schemas and /openapi.json are generated from.
 */
export type { AssetJson, BalanceProofJson, EvmBalanceData, SvmBalanceData } from "@avn/protocol/balance-wire";
import type { EvmBalanceData, SvmBalanceData } from "@avn/protocol/balance-wire";

/** One entry of a batch's `data.results`: exactly what the single route answers for that item. */
export interface BatchEntryJson<Data> {
  status: JsonInteger;
  message: string;
  /** On a 200 entry only. */
  data?: Data;
}

/** `data` of `POST /api/ccq-evm/batch`: every item read at `blockNumber`. */
export interface EvmBatchData {
  blockNumber: JsonInteger;
  results: BatchEntryJson<EvmBalanceData>[];
}

/** `data` of `POST /api/ccq-svm/batch`: every item read at `slot` or later. */
export interface SvmBatchData {
  slot: JsonInteger;
  results: BatchEntryJson<SvmBalanceData>[];
}

/** One leaf of a verdict as read (`data.leaves`), and `POST /api/conditions`' `data`: inferred from the wire contract (`@avn/protocol/condition-wire`). */
export type { ConditionData, ConditionLeafJson } from "@avn/protocol/condition-wire";

/*//////////////////////////////////////////////////////////////
                         THE CONDITION REQUEST
//////////////////////////////////////////////////////////////*/

/** An Ethereum leaf as a request writes it: `min` defaults to "1"; decimals as strings (raw units). */
export interface EthereumLeafInput {
  chain: "ethereum";
  contract_address: string;
  /** ERC-1155 token id; without it the leaf reads ERC-20 / ERC-721 `balanceOf(owner)`. */
  token_id?: string;
  min?: string;
  max?: string;
  /** true: also count what the wallets that delegated to the owner through delegate.xyz v2 hold (docs/conditions.md). */
  delegations?: boolean;
}

/** A Solana leaf as a request writes it (SPL Token, Token-2022, NFTs). */
export interface SolanaLeafInput {
  chain: "solana";
  token_mint_address: string;
  min?: string;
  max?: string;
}

/** A condition as a request writes it: at most 16 leaves, at most 4 combinators above any leaf. */
export type ConditionInput =
  | { all: ConditionInput[] }
  | { any: ConditionInput[] }
  | { atLeast: number; of: ConditionInput[] }
  | { not: ConditionInput }
  | EthereumLeafInput
  | SolanaLeafInput;

/** The body of `POST /api/conditions`, exactly as the API takes it (docs/conditions.md, "The request"). */
export interface ConditionRequestBody {
  owners: { ethereum?: string; solana?: string };
  condition: ConditionInput;
  /** With both owners: the Solana owner's base58 ed25519 signature of `linkMessage(ethereum, l2ChainId)`. */
  links?: { solana: string };
  /** false: the answer leaves out `leaves` (each leaf's balance). Default true. */
  reveal?: boolean;
}

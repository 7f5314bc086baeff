import type { z } from "zod";

import type { EvmBalance, EvmBalanceReader } from "../../chains/evm/balance-reader.ts";
import type { ReorgWatch } from "../../chains/evm/reorg-watch.ts";
import { delegatedBalanceOf } from "../../chains/evm/delegated-balance.ts";
import type { SolanaBalance, SolanaBalanceReader } from "../../chains/solana/balance-reader.ts";
import { parseBlockNumber, parseDecimalUint256, parseEvmAddress, parseSolanaAddress } from "../addresses.ts";
import { attestEvm, attestSvm, type AttestationService, type AttestedAnswer } from "../attestation-hub/attested-query.ts";
import type { ApiMetrics } from "../metrics.ts";
import { ReadThroughCache } from "./read-through.ts";
import { evmBalanceBodySchema, evmBalanceDataSchema, svmBalanceBodySchema, svmBalanceDataSchema } from "@avn/protocol/balance-wire";

/**
 * A request body of a balance route (or one item of a batch, once checked against the same schema): strings, and
 * `block_number`, which may be a JSON integer.
 */
export type BalanceBody = Readonly<Record<string, string>> & { readonly block_number?: string | number };

/**
 * What differs between the Ethereum and the Solana balance routes; everything else (schemas, attested
 * answers, cache, batches) is the same code, in balance-route.ts and batch-route.ts.
 */
export interface BalanceChain<Query extends { key: string }, Value extends { balance: bigint; queryResult: string }> {
  url: string;
  summary: string;
  /** The route's body and its answer's `data` in the wire contract (`@avn/protocol/balance-wire`): its route schemas are generated from these. */
  wire: { body: z.core.$ZodType; data: z.core.$ZodType };
  batch: { summary: string; description: string; positionField: string; positionDescription: string };
  /** The query a body asks, with a key equal for bodies asking the same thing; throws the 400 of a bad address. */
  parse(body: BalanceBody): Query;
  /** What the answer's `data` repeats of the request: the owner under its body field, and any optional field given. */
  echo(body: BalanceBody, query: Query): Readonly<Record<string, string>>;
  /** The position (block, slot) answers are cached at, and every item of a batch is read at. */
  head(): Promise<bigint>;
  /** Reads the balance: at the latest position, or pinned to `position` (a batch's). */
  read(query: Query, position?: bigint): Promise<Value>;
  cache: ReadThroughCache<Value>;
  /** Why `query` cannot have an attested answer (a 400, whether the hub is on or not), or undefined. */
  unattestable(query: Query): string | undefined;
  /** Why `query` can only be answered with `?proof=true` (a field only proofs take), or undefined. */
  proofOnly(query: Query): string | undefined;
  attest(service: AttestationService, query: Query): Promise<AttestedAnswer>;
}

export interface EvmQuery {
  owner: string;
  asset: string;
  /** The ERC-1155 token id (`token_id`); undefined: an ERC-20 / ERC-721 balance. */
  tokenId: bigint | undefined;
  /** `block_number`, for `?proof=true`: the L1 block to prove at; undefined: the block the L2 knows. */
  blockNumber?: bigint;
  /** `include_delegations: true`: the balance counts the delegating wallets' (delegated-balance.ts). */
  delegations: boolean;
  key: string;
}

export const BLOCK_NUMBER_FIELD = "block_number";
/** `block_number` without `?proof=true`, or in a batch's item. */
export const BLOCK_NUMBER_NEEDS_PROOF =
  "block_number is only for ?proof=true on POST /api/ccq-evm: other answers are read at the latest block";

export const TOKEN_ID_FIELD = "token_id";
/** `token_id` with `?attest=true`: the attested struct has no field for the id, so its signatures would not cover it. */
export const TOKEN_ID_NOT_ATTESTABLE =
  "token_id cannot be attested: a BalanceAttestation does not bind the token id (ERC-1155 balances are signed only inside verdicts, POST /api/conditions)";

/** `include_delegations` with `?attest=true`: the struct would name the owner's balance, not a sum over several wallets. */
export const DELEGATIONS_NOT_ATTESTABLE =
  'include_delegations cannot be attested: a BalanceAttestation names one owner\'s balance. A signed answer counting delegations is a verdict: POST /api/conditions with "delegations": true on the leaf';
/** `include_delegations` with `?proof=true`: a storage proof proves one balance slot. */
export const DELEGATIONS_NOT_PROVABLE = "include_delegations cannot be proven: a storage proof proves one owner's balance slot";

export interface SvmQuery {
  owner: string;
  mint: string;
  key: string;
}

/** `POST /api/ccq-evm`: ERC-20 / ERC-721 `balanceOf`, or ERC-1155 with `token_id`, on Ethereum, pinned to a block. */
export function evmChain(
  reader: EvmBalanceReader,
  cacheTtlMs: number,
  metrics: ApiMetrics,
  reorgs?: ReorgWatch,
): BalanceChain<EvmQuery, EvmBalance> {
  return {
    url: "/api/ccq-evm",
    summary: "ERC-20 / ERC-721 balance of a wallet on Ethereum, or ERC-1155 with token_id",
    wire: { body: evmBalanceBodySchema, data: evmBalanceDataSchema },
    batch: {
      summary: "Up to 100 ERC-20 / ERC-721 / ERC-1155 balances on Ethereum, all at one block",
      description: "Each item is answered as POST /api/ccq-evm would answer it; data.blockNumber is the block every item was read at.",
      positionField: "blockNumber",
      positionDescription: "The Ethereum block every item was read at",
    },
    parse: (body) => {
      const owner = parseEvmAddress("user_address", body.user_address);
      const asset = parseEvmAddress("contract_address", body.contract_address);
      const tokenId = body[TOKEN_ID_FIELD] === undefined ? undefined : parseDecimalUint256(TOKEN_ID_FIELD, body[TOKEN_ID_FIELD]);
      const blockNumber = body.block_number === undefined ? undefined : parseBlockNumber(BLOCK_NUMBER_FIELD, body.block_number);
      // A JSON boolean (the route's schema checks it): the one body field that is not a string.
      const delegations = (body as { include_delegations?: unknown }).include_delegations === true;
      const key = `${asset}:${owner}${tokenId === undefined ? "" : `:${tokenId}`}${delegations ? ":delegations" : ""}`;
      return { owner, asset, tokenId, blockNumber, delegations, key };
    },
    // The owner as the request spelled it; the token id normalised ("007" is "7"), as it was read.
    echo: (body, { tokenId }) => {
      const echo: Record<string, string> = { user_address: body.user_address };
      if (tokenId !== undefined) echo[TOKEN_ID_FIELD] = tokenId.toString();
      return echo;
    },
    // The head, and (beside it, at most once a second) whether Ethereum reorganized since the last look.
    head: async () => (await Promise.all([reader.latestBlock(), reorgs?.look()]))[0],
    read: async ({ owner, asset, tokenId, delegations }, block) => {
      if (!delegations) return reader.balanceOf(asset, owner, block, tokenId);
      // Every read at one block: the delegations and each wallet's balance.
      const at = block ?? (await reader.latestBlock());
      return { ...(await delegatedBalanceOf(reader, asset, owner, at, tokenId)), blockNumber: at };
    },
    cache: new ReadThroughCache<EvmBalance>(
      "evm",
      cacheTtlMs,
      metrics,
      (read) => read.blockNumber,
      () => reorgs?.generation ?? 0,
    ),
    unattestable: ({ tokenId, delegations }) =>
      delegations ? DELEGATIONS_NOT_ATTESTABLE : tokenId === undefined ? undefined : TOKEN_ID_NOT_ATTESTABLE,
    proofOnly: ({ blockNumber }) => (blockNumber === undefined ? undefined : BLOCK_NUMBER_NEEDS_PROOF),
    attest: (service, { owner, asset }) => attestEvm(service, owner, asset),
  };
}

/** `POST /api/ccq-svm`: SPL Token / Token-2022 balance on Solana, at a finalized slot or later. */
export function svmChain(reader: SolanaBalanceReader, cacheTtlMs: number, metrics: ApiMetrics): BalanceChain<SvmQuery, SolanaBalance> {
  return {
    url: "/api/ccq-svm",
    summary: "SPL token / Solana NFT balance of a wallet on Solana",
    wire: { body: svmBalanceBodySchema, data: svmBalanceDataSchema },
    batch: {
      summary: "Up to 100 SPL token / Solana NFT balances on Solana, all at or after one finalized slot",
      description: "Each item is answered as POST /api/ccq-svm would answer it; every item was read at data.slot or later.",
      positionField: "slot",
      positionDescription: "The finalized Solana slot every item was read at or after (minContextSlot)",
    },
    parse: (body) => {
      const owner = parseSolanaAddress("owner_address", body.owner_address);
      const mint = parseSolanaAddress("token_mint_address", body.token_mint_address);
      return { owner, mint, key: `${mint}:${owner}` };
    },
    // The owner as parsed: Solana addresses have one spelling.
    echo: (_body, { owner }) => ({ owner_address: owner }),
    head: () => reader.latestSlot(),
    // Pinned: a cached answer serves only when it was read at the pinned slot itself, the single route's rule.
    read: ({ owner, mint }, slot) =>
      slot === undefined ? reader.balanceOf(owner, mint) : reader.balanceOf(owner, mint, { minContextSlot: slot }),
    cache: new ReadThroughCache<SolanaBalance>("svm", cacheTtlMs, metrics, (read) => read.slot),
    unattestable: () => undefined,
    proofOnly: () => undefined,
    attest: (service, { owner, mint }) => attestSvm(service, owner, mint),
  };
}

import type { EvmBalance, EvmBalanceReader } from "../../chains/evm/balance-reader.ts";
import type { SolanaBalance, SolanaBalanceReader } from "../../chains/solana/balance-reader.ts";
import { parseEvmAddress, parseSolanaAddress } from "../addresses.ts";
import { attestEvm, attestSvm, type AttestationService, type AttestedAnswer } from "../attestation-hub/attested-query.ts";
import type { ApiMetrics } from "../metrics.ts";
import { ReadThroughCache } from "./read-through.ts";

/** A request body of a balance route (or one item of a batch, once checked against the same schema). */
export type BalanceBody = Readonly<Record<string, string>>;

/**
 * What differs between the Ethereum and the Solana balance routes; everything else (schemas, attested
 * answers, cache, batches) is the same code, in balance-route.ts and batch-route.ts.
 */
export interface BalanceChain<Query extends { key: string }, Value extends { balance: bigint; queryResult: string }> {
  url: string;
  summary: string;
  /** The body's two fields: the owner, then the asset. */
  fields: readonly [owner: string, asset: string];
  /** What a QueryResult looks like on this chain (documented in the 200 schema). */
  queryResultPattern: string;
  batch: { summary: string; description: string; positionField: string; positionDescription: string };
  /** The query a body asks, with a key equal for bodies asking the same thing; throws the 400 of a bad address. */
  parse(body: BalanceBody): Query;
  /** The owner as the answer echoes it. */
  echoedOwner(body: BalanceBody, query: Query): string;
  /** The position (block, slot) answers are cached at, and every item of a batch is read at. */
  head(): Promise<bigint>;
  /** Reads the balance: at the latest position, or pinned to `position` (a batch's). */
  read(query: Query, position?: bigint): Promise<Value>;
  cache: ReadThroughCache<Value>;
  attest(service: AttestationService, query: Query): Promise<AttestedAnswer>;
}

export interface EvmQuery {
  owner: string;
  asset: string;
  key: string;
}

export interface SvmQuery {
  owner: string;
  mint: string;
  key: string;
}

/** `POST /api/ccq-evm`: ERC-20 / ERC-721 `balanceOf` on Ethereum, pinned to a block. */
export function evmChain(reader: EvmBalanceReader, cacheTtlMs: number, metrics: ApiMetrics): BalanceChain<EvmQuery, EvmBalance> {
  return {
    url: "/api/ccq-evm",
    summary: "ERC-20 / ERC-721 balance of a wallet on Ethereum",
    fields: ["user_address", "contract_address"],
    queryResultPattern: "^0x[0-9a-f]{64}$",
    batch: {
      summary: "Up to 100 ERC-20 / ERC-721 balances on Ethereum, all at one block",
      description: "Each item is answered as POST /api/ccq-evm would answer it; data.blockNumber is the block every item was read at.",
      positionField: "blockNumber",
      positionDescription: "The Ethereum block every item was read at",
    },
    parse: (body) => {
      const owner = parseEvmAddress("user_address", body.user_address);
      const asset = parseEvmAddress("contract_address", body.contract_address);
      return { owner, asset, key: `${asset}:${owner}` };
    },
    // The owner as the request spelled it.
    echoedOwner: (body) => body.user_address,
    head: () => reader.latestBlock(),
    read: ({ owner, asset }, block) => (block === undefined ? reader.balanceOf(asset, owner) : reader.balanceOf(asset, owner, block)),
    cache: new ReadThroughCache<EvmBalance>("evm", cacheTtlMs, metrics, (read) => read.blockNumber),
    attest: (service, { owner, asset }) => attestEvm(service, owner, asset),
  };
}

/** `POST /api/ccq-svm`: SPL Token / Token-2022 balance on Solana, at a finalized slot or later. */
export function svmChain(reader: SolanaBalanceReader, cacheTtlMs: number, metrics: ApiMetrics): BalanceChain<SvmQuery, SolanaBalance> {
  return {
    url: "/api/ccq-svm",
    summary: "SPL token / Solana NFT balance of a wallet on Solana",
    fields: ["owner_address", "token_mint_address"],
    queryResultPattern: "^([0-9a-f]{2})*$",
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
    echoedOwner: (_body, query) => query.owner,
    head: () => reader.latestSlot(),
    // Pinned: a cached answer serves only when it was read at the pinned slot itself, the single route's rule.
    read: ({ owner, mint }, slot) =>
      slot === undefined ? reader.balanceOf(owner, mint) : reader.balanceOf(owner, mint, { minContextSlot: slot }),
    cache: new ReadThroughCache<SolanaBalance>("svm", cacheTtlMs, metrics, (read) => read.slot),
    attest: (service, { owner, mint }) => attestSvm(service, owner, mint),
  };
}

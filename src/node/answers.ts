import { getAddressDecoder } from "@solana/kit";
import { dataSlice, getBytes } from "ethers";

import type { EvmBalance } from "../chains/evm/balance-reader.ts";
import { queryResultHash } from "../common/query-result.ts";
import { AssetNotFoundError } from "../chains/rpc/errors.ts";
import type { SolanaBalanceReader } from "../chains/solana/balance-reader.ts";
import { SourceChain } from "@avn/protocol/constants";

/** A job as the node needs it: what to read. `owner` and `asset` are the job's bytes32 fields. */
export interface JobQuery {
  chain: number;
  owner: string;
  asset: string;
}

/** What a node submits: exactly what the API answers for the same query. */
export interface Answer {
  balance: bigint;
  /** The QueryResult as bytes (hex with 0x): the 32-byte word, or the Solana accounts' data. */
  queryResult: string;
  /** Its keccak-256, which the vote carries (the registry keeps no bytes, so no answer is too long). */
  queryResultHash: string;
  /** The Ethereum block or Solana slot the answer was read at. */
  sourceBlock: bigint;
  /** The Ethereum block's hash, when the reader pinned it by hash: checked before the vote is revealed. */
  sourceBlockHash?: string;
}

/** The source reads a job needs (the API's adapters, or anything that answers like them). */
export interface SourceReaders {
  /** The node's reads name the block's hash too (`HashPinnedEvmReads`); the API's adapter does not. */
  evm: { balanceOf(asset: string, owner: string): Promise<EvmBalance & { blockHash?: string }> };
  solana: Pick<SolanaBalanceReader, "balanceOf">;
}

export type AnswerOutcome = { kind: "answer"; answer: Answer } | { kind: "unanswerable"; reason: string };

/**
 * Reads a job's balance through the same source adapters as the API, so the node and the API agree on
 * what a balance is. An asset that is not there (the API's 404), a malformed job (an EVM address with
 * bits above 160) or an unknown chain is "unanswerable": the node casts no vote and the job expires,
 * refunding its requester (a missing balance is not a zero). Upstream failures are thrown: the job is
 * retried on a later pass.
 */
export async function answerJob(job: JobQuery, readers: SourceReaders): Promise<AnswerOutcome> {
  try {
    if (job.chain === SourceChain.ethereum) {
      const [owner, asset] = [evmAddressOf(job.owner), evmAddressOf(job.asset)];
      if (owner === undefined || asset === undefined) return { kind: "unanswerable", reason: "an address field has bits above 160" };
      const read = await readers.evm.balanceOf(asset, owner);
      return { kind: "answer", answer: { ...answerOf(read.balance, read.queryResult, read.blockNumber), sourceBlockHash: read.blockHash } };
    }
    if (job.chain === SourceChain.solana) {
      const decoder = getAddressDecoder();
      const read = await readers.solana.balanceOf(decoder.decode(getBytes(job.owner)), decoder.decode(getBytes(job.asset)));
      return { kind: "answer", answer: answerOf(read.balance, `0x${read.queryResult}`, read.slot) };
    }
    return { kind: "unanswerable", reason: `unknown source chain ${job.chain}` };
  } catch (error) {
    if (error instanceof AssetNotFoundError) return { kind: "unanswerable", reason: error.message };
    throw error;
  }
}

function answerOf(balance: bigint, queryResult: string, sourceBlock: bigint): Answer {
  return { balance, queryResult, queryResultHash: queryResultHash(queryResult), sourceBlock };
}

function evmAddressOf(word: string): string | undefined {
  if (BigInt(dataSlice(word, 0, 12)) !== 0n) return undefined;
  return dataSlice(word, 12);
}

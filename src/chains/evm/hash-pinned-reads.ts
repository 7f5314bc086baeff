import { toQuantity } from "ethers";

import { DEFAULT_HEAD_TTL_MS } from "../rpc/head-cache.ts";
import type { JsonRpcPool } from "../rpc/json-rpc-pool.ts";
import { SourceError } from "../rpc/errors.ts";
import { EvmBalanceReader, type EvmBalance } from "./balance-reader.ts";

/** A block as a reorg-aware reader names it: its number and its hash. */
export interface BlockRef {
  number: bigint;
  hash: string;
}

/** A balance read at one block, named by number and hash. */
export type HashPinnedBalance = EvmBalance & { blockHash: string };

// Reads in flight pin a few recent heads at most; older readers are dropped (a new head makes a new one).
const READERS_KEPT = 4;

/**
 * EVM balances read at the latest block named by its hash (EIP-1898 `{ blockHash }` in every `eth_call`),
 * so that a read is of one block, whatever the chain does meanwhile: a reorg that replaces the block while
 * the read is in flight makes the read fail (the block is unknown) or answer for the replaced block, never
 * mix the two. The caller keeps the hash with what it read and asks `blockHashAt` before acting on it: a
 * different hash at that number means the block was reorged away (the node does so before revealing a
 * vote, docs/node.md "Reorgs").
 *
 * Each pinned block has its own `EvmBalanceReader` (its Multicall3 batches, not-found rules and hostile
 * contract handling unchanged) whose `eth_call`s at that block number go out by hash instead.
 */
export class HashPinnedEvmReads {
  readonly #rpc: JsonRpcPool;
  readonly #headTtlMs: number;
  readonly #readers = new Map<string, EvmBalanceReader>();
  #head: { block: BlockRef; at: number } | undefined;
  #pendingHead: Promise<BlockRef> | undefined;

  constructor(rpc: JsonRpcPool, options: { headTtlMs?: number } = {}) {
    this.#rpc = rpc;
    this.#headTtlMs = options.headTtlMs ?? DEFAULT_HEAD_TTL_MS;
  }

  /** `owner`'s balance of the token at `asset` at the latest block, with that block's hash. */
  async balanceOf(asset: string, owner: string): Promise<HashPinnedBalance> {
    const head = await this.latest();
    const read = await this.#readerAt(head).balanceOf(asset, owner, head.number);
    return { ...read, blockHash: head.hash };
  }

  /** The hash of the canonical block at `number` now, or undefined when the chain has no such block (yet). */
  async blockHashAt(number: bigint): Promise<string | undefined> {
    const block = await this.#rpc.request<{ hash?: string } | null>("eth_getBlockByNumber", [toQuantity(number), false]);
    return block?.hash ?? undefined;
  }

  /** The latest block, asked at most once per `headTtlMs` (concurrent askers share the request). */
  latest(): Promise<BlockRef> {
    const head = this.#head;
    if (head !== undefined && Date.now() - head.at < this.#headTtlMs) return Promise.resolve(head.block);
    this.#pendingHead ??= this.#rpc
      .request<{ number?: string; hash?: string } | null>("eth_getBlockByNumber", ["latest", false])
      .then((block) => {
        if (typeof block?.number !== "string" || typeof block.hash !== "string")
          throw new SourceError("the Ethereum source named no latest block");
        const ref = { number: BigInt(block.number), hash: block.hash };
        this.#head = { block: ref, at: Date.now() };
        return ref;
      })
      .finally(() => {
        this.#pendingHead = undefined;
      });
    return this.#pendingHead;
  }

  #readerAt(block: BlockRef): EvmBalanceReader {
    const key = `${block.number}:${block.hash}`;
    let reader = this.#readers.get(key);
    if (reader === undefined) {
      const pool = this.#rpc;
      const atNumber = toQuantity(block.number);
      const byHash = { blockHash: block.hash };
      const pinned = {
        request: <T>(method: string, params: unknown[]): Promise<T> => {
          if (method === "eth_blockNumber") return Promise.resolve(atNumber as T);
          // The block parameter is the call's last; the reader states the number, which goes out as the hash.
          const last = params.length - 1;
          if (method === "eth_call" && params[last] === atNumber) return pool.request<T>(method, [...params.slice(0, last), byHash]);
          return pool.request<T>(method, params);
        },
      };
      reader = new EvmBalanceReader({ rpc: pinned as unknown as JsonRpcPool, batchWindowMs: 2 });
      this.#readers.set(key, reader);
      if (this.#readers.size > READERS_KEPT) this.#readers.delete(this.#readers.keys().next().value!);
    }
    return reader;
  }
}

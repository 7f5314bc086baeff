import { DEFAULT_HEAD_TTL_MS } from "../rpc/head-cache.ts";
import type { JsonRpcPool } from "../rpc/json-rpc-pool.ts";

/** Heads remembered by number: deeper reorgs than this are not seen (Ethereum's are one or two blocks). */
const HEADS_KEPT = 64;

/**
 * Notices that Ethereum reorganized: each look (at most one per `ttlMs`, concurrent callers sharing it)
 * reads the latest block's number, hash and parent hash, and compares them with the heads it saw before;
 * a block it saw under another hash, or a parent other than the block it saw before, bumps `generation`.
 * The API's result cache keys its Ethereum answers with the generation (src/api/server/chains.ts), so an
 * answer read before a reorg is never reused after it is seen, even at the same block number: a reorg
 * that replaces the head keeps the number and changes what it holds.
 */
export class ReorgWatch {
  readonly #rpc: JsonRpcPool;
  readonly #ttlMs: number;
  readonly #heads = new Map<bigint, string>();
  #generation = 0;
  #lookedAt = Number.NEGATIVE_INFINITY;
  #pending: Promise<void> | undefined;

  constructor(rpc: JsonRpcPool, ttlMs = DEFAULT_HEAD_TTL_MS) {
    this.#rpc = rpc;
    this.#ttlMs = ttlMs;
  }

  /** How many reorgs were seen so far. */
  get generation(): number {
    return this.#generation;
  }

  /** Looks at the head unless it did within `ttlMs`; a failed look changes nothing (the next one retries). */
  look(): Promise<void> {
    if (performance.now() - this.#lookedAt < this.#ttlMs) return Promise.resolve();
    this.#pending ??= this.#rpc
      .request<{ number?: string; hash?: string; parentHash?: string } | null>("eth_getBlockByNumber", ["latest", false])
      .then(
        (block) => {
          this.#lookedAt = performance.now();
          if (typeof block?.number === "string" && typeof block.hash === "string" && typeof block.parentHash === "string")
            this.#see(BigInt(block.number), block.hash, block.parentHash);
        },
        () => undefined,
      )
      .finally(() => {
        this.#pending = undefined;
      });
    return this.#pending;
  }

  #see(number: bigint, hash: string, parentHash: string): void {
    const seen = this.#heads.get(number);
    const parent = this.#heads.get(number - 1n);
    if ((seen !== undefined && seen !== hash) || (parent !== undefined && parent !== parentHash)) {
      this.#generation += 1;
      // What was seen on the replaced branch says nothing about the new one.
      for (const known of [...this.#heads.keys()]) if (known >= number - 1n) this.#heads.delete(known);
    }
    this.#heads.set(number, hash);
    if (parent === undefined || parent !== parentHash) this.#heads.set(number - 1n, parentHash);
    if (this.#heads.size > HEADS_KEPT) {
      const oldest = [...this.#heads.keys()].reduce((low, key) => (key < low ? key : low));
      this.#heads.delete(oldest);
    }
  }
}

import { toQuantity } from "ethers";
import { decodeFunctionResult, encodeFunctionData, parseAbi, type Hex } from "viem";

import { MULTICALL3_ADDRESS } from "@avn/protocol/constants";
import { AssetNotFoundError, SourceError, TokenIdRequiredError } from "../rpc/errors.ts";
import { DEFAULT_HEAD_TTL_MS, HeadCache } from "../rpc/head-cache.ts";
import { isCallFailure, type JsonRpcPool } from "../rpc/json-rpc-pool.ts";

/** An EVM balance as the API and the nodes report it. */
export interface EvmBalance {
  /** The raw `balanceOf` result, base units. */
  balance: bigint;
  /** `0x` + the 32-byte word `balanceOf` returned. */
  queryResult: string;
  /** The block the balance was read at. */
  blockNumber: bigint;
  /** With delegations counted (delegated-balance.ts): the wallets that delegated to the owner for the asset. */
  wallets?: string[];
}

export interface EvmBalanceReaderOptions {
  rpc: JsonRpcPool;
  /** Most calls in one Multicall3 `aggregate3`. */
  maxBatchSize?: number;
  /**
   * How long a new query waits for others to share its batch, in milliseconds; also when it waited behind
   * a batch in flight, so a trickle of queries costs at most one upstream request per window.
   */
  batchWindowMs?: number;
  /** Batches upstream at once; further queries wait for one to finish and go out together. */
  maxBatchesInFlight?: number;
  /** How long the latest block number is reused before it is asked again. */
  headTtlMs?: number;
  /** The clock `headTtlMs` is measured by, in milliseconds: Date.now unless a test moves it. */
  now?: () => number;
  /** Most queries waiting for a batch; beyond it new queries fail at once instead of queueing without end. */
  maxQueued?: number;
}

// The ABI coding is viem's: for a batch of 500 calls, ethers' general ABI coder held the event loop for
// 150–350 ms (2-core machine), during which the API neither answered nor accepted connections; viem's
// takes under 15 ms.
const MULTICALL3_ABI = parseAbi([
  "function aggregate3((address target, bool allowFailure, bytes callData)[] calls) payable returns ((bool success, bytes returnData)[] returnData)",
]);
const BALANCE_OF_ABI = parseAbi(["function balanceOf(address owner) view returns (uint256)"]);
const ERC1155_BALANCE_OF_ABI = parseAbi(["function balanceOf(address account, uint256 id) view returns (uint256)"]);
const ERC165_ABI = parseAbi(["function supportsInterface(bytes4 interfaceId) view returns (bool)"]);
/** ERC-1155's ERC-165 interface id (EIP-1155: every ERC-1155 contract must answer true to it). */
const ERC1155_INTERFACE_ID = "0xd9b67a26";
const UINT256_LIMIT = 2n ** 256n;
const WORD = 32;
// Precompiles live at low addresses (0x01–0x0a on Ethereum, 0x100 on rollups) and some answer any call
// with 32 bytes; no token can sit there.
const LOWEST_CONTRACT_ADDRESS = 0x10000n;

interface PendingQuery {
  key: string;
  asset: string;
  owner: string;
  /** The ERC-1155 token id; undefined: an ERC-20 / ERC-721 query. */
  tokenId: bigint | undefined;
  /** The block to read at; undefined: the latest block when the batch leaves. */
  block: bigint | undefined;
  /** When it was queued (performance.now()): it leaves once it has had its window to gather others. */
  queuedAt: number;
  resolve: (balance: EvmBalance) => void;
  reject: (error: unknown) => void;
}

/**
 * Reads ERC-20 and ERC-721 balances (`balanceOf(owner)`, the same selector for both) and ERC-1155
 * balances (`balanceOf(owner, id)`, when the query names a token id) pinned to one block. Queries arriving
 * within `batchWindowMs` go upstream together as one Multicall3 `aggregate3` eth_call at one block; while
 * `maxBatchesInFlight` batches are upstream, new queries wait and leave together when one returns, so the
 * busier the API, the larger its batches (no added latency when idle). A partial batch never leaves before its oldest query has had its window: queries that come
 * one by one (clients whose connections open late, say) would otherwise each take the lane as soon as
 * a fast upstream freed it, one upstream request per query; so a trickle costs at most one request per
 * window, however fast the upstream answers. Identical queries in flight share one promise. A burst of
 * N distinct queries thus costs a handful of upstream requests, plus one for the block number. Both kinds
 * of query share all of this: an `aggregate3` is a list of calls, each with its own calldata, so ERC-20
 * and ERC-1155 queries of the moment leave in the same one.
 *
 * "Not found" is decided from the call's answer, so it costs nothing extra: an address without code
 * answers a call with no data, a contract without the `balanceOf` asked for reverts or answers something
 * other than one 32-byte word. The two selectors differ, so an ERC-20 asked with a token id, or an
 * ERC-1155 asked without one, is not found rather than misread.
 *
 * One hostile contract must not spoil its batch: a call that fails inside a batch may have failed only
 * because another one burned the gas, so failures are read again without the calls that succeeded, and a
 * batch whose whole eth_call reverts or runs out of gas is split in halves, down to single calls (a
 * single call failing that way is "not found").
 *
 * A query may name its block (`balanceOf(asset, owner, block)`): the API's batch endpoint reads all its
 * items at one block it states. Such queries join the same queue, window and lanes as the others (so they
 * are bounded by `maxQueued` alike and share an `aggregate3` with the unpinned queries of the moment when
 * the blocks agree); a batch leaving the queue is read as one `aggregate3` per distinct block.
 */
export class EvmBalanceReader {
  readonly #rpc: JsonRpcPool;
  readonly #maxBatchSize: number;
  readonly #batchWindowMs: number;
  readonly #head: HeadCache;
  readonly #maxQueued: number;
  readonly #inFlight = new Map<string, Promise<EvmBalance>>();
  #queue: PendingQuery[] = [];
  readonly #maxBatchesInFlight: number;
  #batchesInFlight = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: EvmBalanceReaderOptions) {
    this.#rpc = options.rpc;
    this.#maxBatchSize = options.maxBatchSize ?? 500;
    this.#batchWindowMs = options.batchWindowMs ?? 10;
    this.#head = new HeadCache(
      async () => BigInt(await this.#rpc.request<string>("eth_blockNumber", [])),
      options.headTtlMs ?? DEFAULT_HEAD_TTL_MS,
      options.now,
    );
    this.#maxBatchesInFlight = options.maxBatchesInFlight ?? 1;
    this.#maxQueued = options.maxQueued ?? 10_000;
  }

  /**
   * The balance of `owner` in the token at `asset`, at `block` or else at the latest block: with `tokenId`,
   * of that ERC-1155 token id, else of the ERC-20 / ERC-721 token. Both addresses must be valid and the id
   * a uint256 (the API checks them; this throws a TypeError otherwise). Queries for the same thing and the
   * same block (or both for the latest) in flight share one read; a pinned and an unpinned query do not,
   * since they may be answered at different blocks.
   */
  balanceOf(asset: string, owner: string, block?: bigint, tokenId?: bigint): Promise<EvmBalance> {
    const [assetKey, ownerKey] = [canonicalAddress(asset), canonicalAddress(owner)];
    checkTokenId(tokenId);
    const id = tokenId === undefined ? "" : `#${tokenId}`;
    const key = block === undefined ? `${assetKey}:${ownerKey}${id}` : `${assetKey}:${ownerKey}${id}@${block}`;
    const existing = this.#inFlight.get(key);
    if (existing !== undefined) return existing;
    if (BigInt(assetKey) < LOWEST_CONTRACT_ADDRESS)
      return Promise.reject(new AssetNotFoundError(`no token contract at ${assetKey} (precompile range)`));
    if (this.#queue.length >= this.#maxQueued)
      return Promise.reject(new SourceError("too many balance queries are waiting for the upstream"));
    const promise = new Promise<EvmBalance>((resolve, reject) => {
      this.#queue.push({ key, asset: assetKey, owner: ownerKey, tokenId, block, queuedAt: performance.now(), resolve, reject });
      if (this.#queue.length >= this.#maxBatchSize) this.#flush();
      else this.#timer ??= setTimeout(() => this.#flush(), this.#batchWindowMs);
    }).finally(() => this.#inFlight.delete(key));
    this.#inFlight.set(key, promise);
    return promise;
  }

  /**
   * An `eth_call` of `data` to `to` at `block`, unbatched: what a delegation read needs besides balances
   * (delegated-balance.ts). Resolves to the returned bytes (`0x` for an address without code).
   */
  callAt(to: string, data: string, block: bigint): Promise<string> {
    return this.#rpc.request<string>("eth_call", [{ to: canonicalAddress(to), data }, toQuantity(block)]);
  }

  /** The latest block number, asked at most once per `headTtlMs` (concurrent askers share the request). */
  latestBlock(): Promise<bigint> {
    return this.#head.get();
  }

  #flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    // All lanes busy: the queue leaves when a batch returns (see #run's finally).
    while (this.#queue.length > 0 && this.#batchesInFlight < this.#maxBatchesInFlight) {
      // A full batch leaves at once; a partial one once its oldest query's window is over, not merely
      // because a lane is free (see the class comment).
      if (this.#queue.length < this.#maxBatchSize) {
        const wait = this.#queue[0].queuedAt + this.#batchWindowMs - performance.now();
        // (Under a millisecond: timers are no finer, and one may fire that much early.)
        if (wait >= 1) {
          this.#timer = setTimeout(() => this.#flush(), wait);
          return;
        }
      }
      const batch = this.#queue.splice(0, this.#maxBatchSize);
      this.#batchesInFlight += 1;
      void this.#run(batch).finally(() => {
        this.#batchesInFlight -= 1;
        if (this.#queue.length > 0) this.#flush();
      });
    }
  }

  async #run(batch: PendingQuery[]): Promise<void> {
    // One aggregate3 per block. The head is asked only when some query is unpinned: a batch of pinned
    // queries costs its eth_call and nothing else (the batch endpoint's "one block number, one eth_call").
    const byBlock = new Map<bigint, PendingQuery[]>();
    const add = (block: bigint, query: PendingQuery) => {
      const group = byBlock.get(block);
      if (group === undefined) byBlock.set(block, [query]);
      else group.push(query);
    };
    const unpinned: PendingQuery[] = [];
    for (const query of batch) {
      if (query.block === undefined) unpinned.push(query);
      else add(query.block, query);
    }
    if (unpinned.length > 0) {
      try {
        const head = await this.latestBlock();
        for (const query of unpinned) add(head, query);
      } catch (error) {
        for (const query of unpinned) query.reject(error);
      }
    }
    await Promise.all(
      [...byBlock].map(async ([block, queries]) => {
        try {
          await this.#settle(queries, block);
        } catch (error) {
          for (const query of queries) query.reject(error);
        }
      }),
    );
  }

  /** Answers every query of `batch` at `blockNumber`, reading failures again as the class comment says. */
  async #settle(batch: PendingQuery[], blockNumber: bigint): Promise<void> {
    let results: CallResult[];
    try {
      results = await this.#aggregate(batch, blockNumber);
    } catch (error) {
      if (!isCallFailure(error)) throw error;
      if (batch.length === 1) {
        batch[0].reject(await this.#notFound(batch[0], blockNumber));
        return;
      }
      const half = Math.ceil(batch.length / 2);
      await Promise.all([this.#settle(batch.slice(0, half), blockNumber), this.#settle(batch.slice(half), blockNumber)]);
      return;
    }
    const failed: PendingQuery[] = [];
    for (const [index, query] of batch.entries()) {
      const { success, word } = results[index];
      if (success && word !== undefined) query.resolve({ balance: BigInt(word), queryResult: word, blockNumber });
      else if (batch.length === 1) query.reject(await this.#notFound(query, blockNumber));
      else failed.push(query);
    }
    if (failed.length === 0) return;
    if (failed.length < batch.length) return this.#settle(failed, blockNumber);
    const half = Math.ceil(failed.length / 2);
    await Promise.all([this.#settle(failed.slice(0, half), blockNumber), this.#settle(failed.slice(half), blockNumber)]);
  }

  /**
   * Why a query alone failed: without a token id, an ERC-1155 contract is asked whether it is one (ERC-165,
   * at the same block), so that its caller is told to name the id rather than that no token is there. Only
   * a failed query costs this second call; if it fails too, the asset is simply not found.
   */
  async #notFound(query: PendingQuery, blockNumber: bigint): Promise<AssetNotFoundError> {
    if (query.tokenId !== undefined) return notFound(query);
    try {
      const data = encodeFunctionData({ abi: ERC165_ABI, functionName: "supportsInterface", args: [ERC1155_INTERFACE_ID] });
      const raw = await this.#rpc.request<unknown>("eth_call", [{ to: query.asset, data }, toQuantity(blockNumber)]);
      if (typeof raw === "string" && decodeFunctionResult({ abi: ERC165_ABI, functionName: "supportsInterface", data: raw as Hex }))
        return new TokenIdRequiredError(query.asset);
    } catch {
      // Reverted, no code, undecodable, or the upstream failed: the balance read already said not found.
    }
    return notFound(query);
  }

  async #aggregate(batch: PendingQuery[], blockNumber: bigint): Promise<CallResult[]> {
    const raw = await this.#rpc.request<unknown>("eth_call", [
      { to: MULTICALL3_ADDRESS, data: encodeAggregate3(batch) },
      toQuantity(blockNumber),
    ]);
    return decodeAggregate3(raw, batch.length);
  }
}

/** One call's answer in an `aggregate3` result: `word` is its return data when that is one 32-byte word. */
interface CallResult {
  success: boolean;
  /** `0x` + 64 lower-case hex digits; undefined when the call returned anything but 32 bytes. */
  word: string | undefined;
}

/** `aggregate3(calls)` calldata for each query's `balanceOf` on its asset, every call allowed to fail. */
function encodeAggregate3(batch: readonly PendingQuery[]): Hex {
  const calls = batch.map((query) => ({ target: query.asset as Hex, allowFailure: true, callData: balanceOfCallData(query) }));
  return encodeFunctionData({ abi: MULTICALL3_ABI, functionName: "aggregate3", args: [calls] });
}

/** `balanceOf(owner)` (ERC-20, ERC-721), or `balanceOf(owner, id)` (ERC-1155) for a query with a token id. */
function balanceOfCallData({ owner, tokenId }: PendingQuery): Hex {
  return tokenId === undefined
    ? encodeFunctionData({ abi: BALANCE_OF_ABI, functionName: "balanceOf", args: [owner as Hex] })
    : encodeFunctionData({ abi: ERC1155_BALANCE_OF_ABI, functionName: "balanceOf", args: [owner as Hex, tokenId] });
}

/** The `(bool success, bytes returnData)[]` that aggregate3 returned, checked to hold `count` results. */
function decodeAggregate3(raw: unknown, count: number): CallResult[] {
  let results: ReadonlyArray<{ success: boolean; returnData: Hex }>;
  try {
    if (typeof raw !== "string" || !/^0x[0-9a-fA-F]*$/.test(raw)) throw new Error("not hex bytes");
    results = decodeFunctionResult({ abi: MULTICALL3_ABI, functionName: "aggregate3", data: raw as Hex });
  } catch (error) {
    throw new SourceError("the upstream answered an undecodable Multicall3 result (is Multicall3 deployed?)", { cause: error });
  }
  if (results.length !== count) throw new SourceError("the upstream's Multicall3 answer has the wrong length");
  // One 32-byte word is `0x` + 64 hex digits; viem writes hex in lower case.
  return results.map(({ success, returnData }) => ({
    success,
    word: returnData.length === 2 + 2 * WORD ? returnData.toLowerCase() : undefined,
  }));
}

function notFound({ asset, tokenId }: PendingQuery): AssetNotFoundError {
  return new AssetNotFoundError(tokenId === undefined ? `no ERC-20 or ERC-721 contract at ${asset}` : `no ERC-1155 contract at ${asset}`);
}

/**
 * A token id must be a uint256, and is checked here, where its caller gets the error: viem would refuse it
 * only while encoding the whole aggregate3, failing every query batched with it.
 */
function checkTokenId(tokenId: bigint | undefined): void {
  if (tokenId === undefined) return;
  if (typeof tokenId !== "bigint" || tokenId < 0n || tokenId >= UINT256_LIMIT) {
    throw new TypeError(`${String(tokenId)} is not an ERC-1155 token id (a uint256)`);
  }
}

/** Lower-case hex: one spelling per address for keys and calls (checksumming would cost a keccak each). */
function canonicalAddress(value: string): string {
  if (!/^0x[0-9a-fA-F]{40}$/.test(value)) throw new TypeError(`${value} is not an EVM address`);
  return value.toLowerCase();
}

import { AbiCoder, dataLength, Interface, toQuantity } from "ethers";

import { MULTICALL3_ADDRESS } from "../../op/predeploys.ts";
import { AssetNotFoundError, SourceError } from "../rpc/errors.ts";
import { HeadCache } from "../rpc/head-cache.ts";
import { isCallFailure, type JsonRpcPool } from "../rpc/json-rpc-pool.ts";

/** An EVM balance as the API and the nodes report it. */
export interface EvmBalance {
  /** The raw `balanceOf` result, base units. */
  balance: bigint;
  /** `0x` + the 32-byte word `balanceOf` returned. */
  queryResult: string;
  /** The block the balance was read at. */
  blockNumber: bigint;
}

export interface EvmBalanceReaderOptions {
  rpc: JsonRpcPool;
  /** Most calls in one Multicall3 `aggregate3`. */
  maxBatchSize?: number;
  /** How long a new query waits for others to share its batch, in milliseconds. */
  batchWindowMs?: number;
  /** Batches upstream at once; further queries wait for one to finish and go out together. */
  maxBatchesInFlight?: number;
  /** How long the latest block number is reused before it is asked again. */
  headTtlMs?: number;
  /** Most queries waiting for a batch; beyond it new queries fail at once instead of queueing without end. */
  maxQueued?: number;
}

const MULTICALL3 = new Interface([
  "function aggregate3((address target, bool allowFailure, bytes callData)[] calls) payable returns ((bool success, bytes returnData)[] returnData)",
]);
const ERC20_OR_721 = new Interface(["function balanceOf(address owner) view returns (uint256)"]);
const WORD = 32;
// Precompiles live at low addresses (0x01–0x0a on Ethereum, 0x100 on rollups) and some answer any call
// with 32 bytes; no token can sit there.
const LOWEST_CONTRACT_ADDRESS = 0x10000n;

interface PendingQuery {
  key: string;
  asset: string;
  owner: string;
  resolve: (balance: EvmBalance) => void;
  reject: (error: unknown) => void;
}

/**
 * Reads ERC-20 and ERC-721 balances (`balanceOf(owner)`, the same selector for both) pinned to one
 * block. Queries arriving within `batchWindowMs` go upstream together as one Multicall3 `aggregate3`
 * eth_call at one block; while `maxBatchesInFlight` batches are upstream, new queries wait and leave
 * together when one returns, so the busier the API, the larger its batches (no added latency when
 * idle). Identical queries in flight share one promise. A burst of N distinct queries thus costs a
 * handful of upstream requests, plus one for the block number.
 *
 * "Not found" is decided from the call's answer, so it costs nothing extra: an address without code
 * answers a call with no data, a contract without `balanceOf` reverts or answers something other than
 * one 32-byte word.
 *
 * One hostile contract must not spoil its batch: a call that fails inside a batch may have failed only
 * because another one burned the gas, so failures are read again without the calls that succeeded, and a
 * batch whose whole eth_call reverts or runs out of gas is split in halves, down to single calls (a
 * single call failing that way is "not found").
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
    this.#head = new HeadCache(async () => BigInt(await this.#rpc.request<string>("eth_blockNumber", [])), options.headTtlMs ?? 1_000);
    this.#maxBatchesInFlight = options.maxBatchesInFlight ?? 1;
    this.#maxQueued = options.maxQueued ?? 10_000;
  }

  /** The balance of `owner` in the token at `asset`. Both must be valid addresses (the API checks them). */
  balanceOf(asset: string, owner: string): Promise<EvmBalance> {
    const [assetKey, ownerKey] = [canonicalAddress(asset), canonicalAddress(owner)];
    const key = `${assetKey}:${ownerKey}`;
    const existing = this.#inFlight.get(key);
    if (existing !== undefined) return existing;
    if (BigInt(assetKey) < LOWEST_CONTRACT_ADDRESS) return Promise.reject(new AssetNotFoundError(`no token contract at ${assetKey} (precompile range)`));
    if (this.#queue.length >= this.#maxQueued) return Promise.reject(new SourceError("too many balance queries are waiting for the upstream"));
    const promise = new Promise<EvmBalance>((resolve, reject) => {
      this.#queue.push({ key, asset: assetKey, owner: ownerKey, resolve, reject });
      if (this.#queue.length >= this.#maxBatchSize) this.#flush();
      else this.#timer ??= setTimeout(() => this.#flush(), this.#batchWindowMs);
    }).finally(() => this.#inFlight.delete(key));
    this.#inFlight.set(key, promise);
    return promise;
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
      const batch = this.#queue.splice(0, this.#maxBatchSize);
      this.#batchesInFlight += 1;
      void this.#run(batch).finally(() => {
        this.#batchesInFlight -= 1;
        if (this.#queue.length > 0) this.#flush();
      });
    }
  }

  async #run(batch: PendingQuery[]): Promise<void> {
    try {
      await this.#settle(batch, await this.latestBlock());
    } catch (error) {
      for (const query of batch) query.reject(error);
    }
  }

  /** Answers every query of `batch` at `blockNumber`, reading failures again as the class comment says. */
  async #settle(batch: PendingQuery[], blockNumber: bigint): Promise<void> {
    let results: Array<{ success: boolean; returnData: string }>;
    try {
      results = await this.#aggregate(batch, blockNumber);
    } catch (error) {
      if (!isCallFailure(error)) throw error;
      if (batch.length === 1) {
        batch[0].reject(notFound(batch[0]));
        return;
      }
      const half = Math.ceil(batch.length / 2);
      await Promise.all([this.#settle(batch.slice(0, half), blockNumber), this.#settle(batch.slice(half), blockNumber)]);
      return;
    }
    const failed: PendingQuery[] = [];
    batch.forEach((query, index) => {
      const { success, returnData } = results[index];
      if (success && dataLength(returnData) === WORD) {
        const [balance] = AbiCoder.defaultAbiCoder().decode(["uint256"], returnData) as unknown as [bigint];
        query.resolve({ balance, queryResult: returnData.toLowerCase(), blockNumber });
      } else if (batch.length === 1) query.reject(notFound(query));
      else failed.push(query);
    });
    if (failed.length === 0) return;
    if (failed.length < batch.length) return this.#settle(failed, blockNumber);
    const half = Math.ceil(failed.length / 2);
    await Promise.all([this.#settle(failed.slice(0, half), blockNumber), this.#settle(failed.slice(half), blockNumber)]);
  }

  async #aggregate(batch: PendingQuery[], blockNumber: bigint): Promise<Array<{ success: boolean; returnData: string }>> {
    const calls = batch.map((query) => ({
      target: query.asset,
      allowFailure: true,
      callData: ERC20_OR_721.encodeFunctionData("balanceOf", [query.owner]),
    }));
    const raw = await this.#rpc.request<string>("eth_call", [
      { to: MULTICALL3_ADDRESS, data: MULTICALL3.encodeFunctionData("aggregate3", [calls]) },
      toQuantity(blockNumber),
    ]);
    let results: Array<{ success: boolean; returnData: string }>;
    try {
      [results] = MULTICALL3.decodeFunctionResult("aggregate3", raw) as unknown as [Array<{ success: boolean; returnData: string }>];
    } catch (error) {
      throw new SourceError("the upstream answered an undecodable Multicall3 result (is Multicall3 deployed?)", { cause: error });
    }
    if (results.length !== batch.length) throw new SourceError("the upstream's Multicall3 answer has the wrong length");
    return results;
  }
}

function notFound(query: PendingQuery): AssetNotFoundError {
  return new AssetNotFoundError(`no ERC-20 or ERC-721 contract at ${query.asset}`);
}

/** Lower-case hex: one spelling per address for keys and calls (checksumming would cost a keccak each). */
function canonicalAddress(value: string): string {
  if (!/^0x[0-9a-fA-F]{40}$/.test(value)) throw new TypeError(`${value} is not an EVM address`);
  return value.toLowerCase();
}

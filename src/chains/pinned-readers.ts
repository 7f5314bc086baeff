import type { RpcTransport } from "@solana/kit";
import { toQuantity } from "ethers";

import { EvmBalanceReader } from "./evm/balance-reader.ts";
import type { JsonRpcPool } from "./rpc/json-rpc-pool.ts";
import { SolanaBalanceReader } from "./solana/balance-reader.ts";

// Attestation rounds pin recent positions; a few readers per chain cover the rounds in flight.
const READERS_KEPT = 8;

/**
 * The source readers of src/chains at a pinned position, for attestations: the Ethereum reader sees
 * `eth_blockNumber` answer the pinned block (so its Multicall3 batches, not-found rules and hostile-contract
 * handling run unchanged, at that block), and the Solana reader's reads carry `minContextSlot` = the
 * pinned slot (so the RPC refuses to answer from an older state). One reader per position, so concurrent
 * queries at one block still share their Multicall3 batch.
 */
export class PinnedReaders {
  readonly #evmRpc: JsonRpcPool;
  readonly #solanaTransport: RpcTransport;
  readonly #evm = new Map<bigint, EvmBalanceReader>();
  readonly #solana = new Map<bigint, SolanaBalanceReader>();

  constructor(evmRpc: JsonRpcPool, solanaTransport: RpcTransport) {
    this.#evmRpc = evmRpc;
    this.#solanaTransport = solanaTransport;
  }

  /** Reads balances at Ethereum block `block`. */
  evmAt(block: bigint): EvmBalanceReader {
    return remember(this.#evm, block, () => {
      const pool = this.#evmRpc;
      const pinned = {
        request: <T>(method: string, params: unknown[]): Promise<T> =>
          method === "eth_blockNumber" ? Promise.resolve(toQuantity(block) as T) : pool.request<T>(method, params),
      };
      return new EvmBalanceReader({ rpc: pinned as unknown as JsonRpcPool, batchWindowMs: 2 });
    });
  }

  /** Reads balances on Solana at slot `slot` or later. */
  solanaFrom(slot: bigint): SolanaBalanceReader {
    return remember(this.#solana, slot, () => {
      const transport = this.#solanaTransport;
      const pinned = (config: Parameters<RpcTransport>[0]) => transport({ ...config, payload: withMinContextSlot(config.payload, slot) });
      return new SolanaBalanceReader(pinned as RpcTransport);
    });
  }
}

const PINNED_METHODS = new Set(["getAccountInfo", "getMultipleAccounts", "getTokenAccountsByOwner"]);

/** The JSON-RPC payload with `minContextSlot` raised to `slot` in its trailing options object. */
function withMinContextSlot(payload: unknown, slot: bigint): unknown {
  const request = payload as { method?: string; params?: unknown[] };
  if (!PINNED_METHODS.has(request.method ?? "") || !Array.isArray(request.params)) return payload;
  const params = [...request.params];
  const last = params.length - 1;
  const options = { ...(params[last] as { minContextSlot?: bigint }) };
  options.minContextSlot =
    options.minContextSlot !== undefined && BigInt(options.minContextSlot) > slot ? BigInt(options.minContextSlot) : slot;
  params[last] = options;
  return { ...request, params };
}

function remember<T>(readers: Map<bigint, T>, key: bigint, create: () => T): T {
  let reader = readers.get(key);
  if (reader === undefined) {
    reader = create();
    readers.set(key, reader);
    if (readers.size > READERS_KEPT) readers.delete(readers.keys().next().value!);
  }
  return reader;
}

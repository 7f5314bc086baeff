import { EvmBalanceReader } from "./evm/balance-reader.ts";
import type { FailoverOptions } from "./rpc/failover.ts";
import { JsonRpcPool } from "./rpc/json-rpc-pool.ts";
import { SolanaBalanceReader } from "./solana/balance-reader.ts";
import { createFailoverTransport } from "./solana/failover-transport.ts";

/** The two source adapters over their RPC URLs: what the API and the circuit node both read through. */
export interface SourceReaders {
  /** The EVM pool itself, for head reads (readiness, the node's start-up benchmark). */
  evmRpc: JsonRpcPool;
  evm: EvmBalanceReader;
  solana: SolanaBalanceReader;
}

export function createSourceReaders(options: { evm: FailoverOptions; solana: FailoverOptions }): SourceReaders {
  const evmRpc = new JsonRpcPool(options.evm);
  return {
    evmRpc,
    evm: new EvmBalanceReader({ rpc: evmRpc }),
    solana: new SolanaBalanceReader(createFailoverTransport(options.solana)),
  };
}

import type { SolanaBalanceReader } from "../chains/solana/balance-reader.ts";
import type { JsonRpcPool } from "../chains/rpc/json-rpc-pool.ts";

export interface CapacityReport {
  /** Median round trip to the EVM and Solana sources, milliseconds. */
  evmLatencyMs: number;
  solanaLatencyMs: number;
  /** Source reads per second measured with `concurrency` reads in flight. */
  readsPerSecond: number;
  /** What the node reports on-chain with its heartbeats: jobs per minute it can answer (uint32). */
  jobsPerMinute: number;
}

const SAMPLES = 5;
const CONCURRENCY = 16;
const MAX_UINT32 = 2 ** 32 - 1;

/**
 * The start-up benchmark: the sources' round-trip latency (sequential head reads) and throughput
 * (`CONCURRENCY` head reads of each source in flight at once). A job costs one read on Ethereum and two on
 * Solana, so the slower of the two paths bounds the jobs per minute.
 */
export async function measureCapacity(sources: { evmRpc: JsonRpcPool; solana: SolanaBalanceReader }): Promise<CapacityReport> {
  const evmRead = () => sources.evmRpc.request("eth_blockNumber", []);
  // Uncached reads: the readers' head caches would hide the round trip.
  const solanaRead = () => sources.solana.currentSlotUncached();
  const median = async (read: () => Promise<unknown>) => {
    const samples: number[] = [];
    for (let i = 0; i < SAMPLES; i += 1) {
      const started = performance.now();
      await read();
      samples.push(performance.now() - started);
    }
    return samples.sort((a, b) => a - b)[Math.floor(SAMPLES / 2)];
  };
  const evmLatencyMs = await median(evmRead);
  const solanaLatencyMs = await median(solanaRead);
  const throughput = async (read: () => Promise<unknown>) => {
    const started = performance.now();
    await Promise.all(Array.from({ length: CONCURRENCY }, read));
    return (CONCURRENCY * 1000) / Math.max(performance.now() - started, 1);
  };
  const evmReads = await throughput(evmRead);
  const solanaReads = await throughput(solanaRead);
  const readsPerSecond = Math.min(evmReads, solanaReads / 2);
  return {
    evmLatencyMs: Math.round(evmLatencyMs),
    solanaLatencyMs: Math.round(solanaLatencyMs),
    readsPerSecond: Math.round(readsPerSecond),
    jobsPerMinute: Math.min(MAX_UINT32, Math.floor(readsPerSecond * 60)),
  };
}

import path from "node:path";

import type { Provider } from "ethers";
import type { Logger } from "pino";

import type { SolanaBalanceReader } from "../chains/solana/balance-reader.ts";
import type { JsonRpcPool } from "../chains/rpc/json-rpc-pool.ts";
import { describeError } from "../common/describe-error.ts";
import { measureCapacity, type CapacityReport } from "./capacity.ts";
import { nodeRegistryAt, verificationRegistryAt, type ProtocolAddresses } from "./contracts.ts";
import type { Lifecycle } from "./lifecycle.ts";
import { NodeStateStore } from "./state-store.ts";

export const STATE_FILE = "node-state.sqlite";

/** The L2 chain as start-up found it: what the rest of the node takes as given. */
export interface L2Chain {
  chainId: bigint;
  /** The registry's job timeout, seconds (the default start block goes back this far). */
  jobTimeout: number;
  genesisHash: string | undefined;
  addresses: ProtocolAddresses;
}

/** A start-up step retried with backoff until it succeeds or the node stops (see `startupSteps`). */
export type StartupStep = <T>(step: string, work: () => Promise<T>) => Promise<T>;

/**
 * Start-up reads are retried with backoff, each failure on the next L2 URL, instead of crash-looping the
 * container: an RPC that is down at boot is the common case, not a configuration error.
 */
export function startupSteps(lifecycle: Lifecycle, logger: Logger, failover: () => void): StartupStep {
  const log = logger.child({ component: "startup" });
  return (step, work) =>
    lifecycle.retry(work, (error, delayMs) => {
      log.warn({ step, error: describeError(error), retryInSeconds: delayMs / 1000 }, "start-up step failed; retrying");
      failover();
    });
}

/** Reads the chain and, from the registry, the node registry and license addresses. */
export async function discoverChain(provider: Provider, registryAddress: string): Promise<L2Chain> {
  const registry = verificationRegistryAt(registryAddress, provider);
  const nodeRegistry = await registry.NODE_REGISTRY();
  const license = await nodeRegistryAt(nodeRegistry, provider).LICENSE();
  const [network, jobTimeout, genesis] = await Promise.all([provider.getNetwork(), registry.jobTimeout(), provider.getBlock(0)]);
  return {
    chainId: network.chainId,
    jobTimeout: Number(jobTimeout),
    genesisHash: genesis?.hash ?? undefined,
    addresses: { registry: registryAddress, nodeRegistry, license },
  };
}

/**
 * Opens the journal in the cache directory, anchored to this chain and registry: a journal left by
 * another devnet or deployment is cleared, since its job ids and nonces mean other things there.
 */
export function openJournal(cacheDir: string, chain: L2Chain, logger: Logger): NodeStateStore {
  const journal = new NodeStateStore(path.join(cacheDir, STATE_FILE));
  if (journal.anchor(`${chain.chainId}:${chain.addresses.registry}:${chain.genesisHash}`)) {
    logger.child({ component: "startup" }).warn("the journal in the cache directory belonged to another chain or registry: cleared");
  }
  return journal;
}

/** The start-up benchmark of the source RPCs (the capacity heartbeats report), retried like any start-up read. */
export async function benchmarkSources(
  step: StartupStep,
  sources: { evmRpc: JsonRpcPool; solana: SolanaBalanceReader },
  logger: Logger,
): Promise<CapacityReport> {
  const capacity = await step("the start-up benchmark of the source RPCs", () => measureCapacity(sources));
  logger.child({ component: "startup" }).info({ capacity }, "capacity measured");
  return capacity;
}

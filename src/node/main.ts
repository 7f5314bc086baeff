import path from "node:path";

import { FallbackProvider, formatEther, JsonRpcProvider, WebSocketProvider, type Provider } from "ethers";
import { pino, type Logger } from "pino";

import { EvmBalanceReader } from "../chains/evm/balance-reader.ts";
import { JsonRpcPool } from "../chains/rpc/json-rpc-pool.ts";
import { SolanaBalanceReader } from "../chains/solana/balance-reader.ts";
import { createFailoverTransport } from "../chains/solana/failover-transport.ts";
import { PollingLoop } from "../common/polling-loop.ts";
import { loadOrCreateBurner, BURNER_FILE } from "./burner.ts";
import { measureCapacity } from "./capacity.ts";
import type { NodeConfig } from "./config.ts";
import { redactedNodeConfig } from "./config.ts";
import { nodeLicenseAt, nodeRegistryAt, verificationRegistryAt } from "./contracts.ts";
import { NodeMetrics, startHealthServer } from "./health.ts";
import { runJobPass } from "./job-runner.ts";
import { delegationInstructions, readDelegationStatus, type DelegationStatus } from "./licenses.ts";
import { NodeStateStore } from "./state-store.ts";
import { describe, TxSender } from "./tx-sender.ts";

export const STATE_FILE = "node-state.sqlite";
const DELEGATION_CHECK_MS = 5_000;
const INSTRUCTIONS_EVERY_MS = 60_000;

export interface RunningNode {
  burner: string;
  /** The health and metrics URL, when a port was configured. */
  healthUrl?: string;
  /** Finishes the pass in progress and the transaction being sent, then stops. Journaled state is kept. */
  stop(): Promise<void>;
}

/**
 * The circuit node: its burner wallet, the delegation check, heartbeats and the job loop, as DESIGN
 * section 1 describes. Waits (and says what to do) until a license of an allowlisted owner is delegated
 * to its burner; then heart-beats on schedule and answers jobs until stopped.
 */
export async function startNode(
  config: NodeConfig,
  options: { logger?: Logger; signal?: AbortSignal } = {},
): Promise<RunningNode> {
  const logger = options.logger ?? pino({ level: config.LOG_LEVEL });
  const burner = await loadOrCreateBurner(config.NODE_CACHE_DIR);
  const burnerAddress = burner.wallet.address;
  logger.info(
    { burner: burnerAddress },
    `burner wallet ${burnerAddress} (${burner.created ? "generated now" : "reused"}; key in ${path.join(config.NODE_CACHE_DIR, BURNER_FILE)}, mode 0600)`,
  );
  if (burner.tightenedMode) logger.warn(`the burner key file was readable by others; its mode is now 0600`);
  logger.info({ config: redactedNodeConfig(config) }, "node configuration");

  const l2 = l2Provider(config.L2_RPC_URLS);
  const chainId = (await l2.getNetwork()).chainId;
  const wallet = burner.wallet.connect(l2);
  const registry = verificationRegistryAt(config.VERIFICATION_REGISTRY, l2);
  const nodeRegistryAddress = await registry.NODE_REGISTRY();
  const nodeRegistry = nodeRegistryAt(nodeRegistryAddress, l2);
  const license = nodeLicenseAt(await nodeRegistry.LICENSE(), l2);
  const [maxQueryResultBytes, jobTimeout] = await Promise.all([registry.MAX_QUERY_RESULT_LENGTH(), registry.jobTimeout()]);
  const genesis = await l2.getBlock(0);

  const store = new NodeStateStore(path.join(config.NODE_CACHE_DIR, STATE_FILE));
  if (store.anchor(`${chainId}:${config.VERIFICATION_REGISTRY}:${genesis?.hash}`)) {
    logger.warn("the journal in the cache directory belongs to another chain or registry: cleared");
  }
  const metrics = new NodeMetrics();
  const upstream = { timeoutMs: config.UPSTREAM_TIMEOUT_MS };
  const evmRpc = new JsonRpcPool({ urls: config.EVM_RPC_URLS, ...upstream });
  const solanaTransport = createFailoverTransport({ urls: config.SOLANA_RPC_URLS, ...upstream });
  const readers = { evm: new EvmBalanceReader({ rpc: evmRpc }), solana: new SolanaBalanceReader(solanaTransport) };

  const capacity = await measureCapacity({ evmRpc, solana: readers.solana });
  logger.info(
    { capacity },
    `capacity: ${capacity.jobsPerMinute} jobs/min (source latency: Ethereum ${capacity.evmLatencyMs} ms, Solana ${capacity.solanaLatencyMs} ms; ${capacity.readsPerSecond} reads/s)`,
  );

  const log = (level: "debug" | "info" | "warn" | "error", message: string) => logger[level](message);
  let jobLoop: PollingLoop<boolean> | undefined;
  const sender = new TxSender({
    wallet,
    provider: l2,
    store,
    chainId,
    feeBumpAfterMs: config.FEE_BUMP_AFTER_MS,
    log,
    onVotesLost: (block) => {
      if (block !== undefined && (store.cursor() ?? -1) >= block) store.setCursor(block - 1);
      jobLoop?.wake();
    },
    onReverted: (tx) => {
      metrics.transactions.inc({ kind: tx.kind, outcome: "reverted" });
      logger.error(`transaction ${tx.id} (${tx.kind}) reverted; its votes will be sent again if their jobs are still open`);
    },
  });
  await sender.recover();

  // Delegation: checked on every heartbeat tick; the job loop votes for what the last check found.
  let delegation: DelegationStatus = { delegated: [], undelegated: [] };
  let lastInstructionsAt = 0;
  const checkDelegation = async () => {
    const previous = delegation.delegated;
    delegation = await readDelegationStatus({ license, nodeRegistry }, config.OWNERS_ALLOWLIST, burnerAddress);
    metrics.delegatedLicenses.set(delegation.delegated.length);
    const lost = previous.filter((id) => !delegation.delegated.includes(id));
    const gained = delegation.delegated.filter((id) => !previous.includes(id));
    if (lost.length > 0) logger.warn(`license(s) ${lost.join(", ")} no longer delegated to this node (transferred or undelegated): not voting for them`);
    if (gained.length > 0) logger.info(`voting for license(s) ${gained.join(", ")}`);
    if (delegation.delegated.length === 0 && Date.now() - lastInstructionsAt >= INSTRUCTIONS_EVERY_MS) {
      lastInstructionsAt = Date.now();
      logger.warn(delegationInstructions(delegation, config.OWNERS_ALLOWLIST, burnerAddress, nodeRegistryAddress));
    }
  };
  const warnIfPoor = async () => {
    const balance = await l2.getBalance(burnerAddress);
    if (balance < config.MIN_BURNER_BALANCE_WEI) {
      logger.warn(
        `the burner ${burnerAddress} has ${formatEther(balance)} ETH on L2, below ${formatEther(config.MIN_BURNER_BALANCE_WEI)}: send it gas money`,
      );
    }
  };

  await warnIfPoor();
  for (;;) {
    await checkDelegation().catch((error: unknown) => logger.warn(`delegation check failed: ${describe(error)}`));
    if (delegation.delegated.length > 0) break;
    if (options.signal?.aborted) {
      await sender.stop();
      store.close();
      l2.destroy();
      throw new Error("stopped while waiting for a delegation");
    }
    await new Promise((resolve) => setTimeout(resolve, DELEGATION_CHECK_MS));
  }

  const heartbeat = async () => {
    await checkDelegation();
    if (delegation.delegated.length === 0) return;
    const data = nodeRegistry.interface.encodeFunctionData("heartbeat(uint32)", [capacity.jobsPerMinute]);
    const { outcome } = await sender.send("heartbeat", nodeRegistryAddress, data);
    void outcome.then((result) => metrics.transactions.inc({ kind: "heartbeat", outcome: result }));
    await warnIfPoor();
  };
  // The first heartbeat must be mined before votes count (licenses are live only after one).
  const first = await sender.send("heartbeat", nodeRegistryAddress, nodeRegistry.interface.encodeFunctionData("heartbeat(uint32)", [capacity.jobsPerMinute]));
  logger.info(`first heartbeat sent; waiting for it to be mined`);
  await first.outcome;
  const heartbeatLoop = new PollingLoop(heartbeat, config.HEARTBEAT_INTERVAL_SECONDS * 1000, (error) =>
    logger.warn(`heartbeat failed: ${describe(error)} (retrying at the next tick)`),
  );

  const startBlock = async () => {
    if (config.START_BLOCK !== undefined) return config.START_BLOCK;
    // No journal yet: jobs older than one timeout are closed, so start there (at least 1 s per block).
    return Math.max(0, (await l2.getBlockNumber()) - Number(jobTimeout));
  };
  jobLoop = new PollingLoop(
    async () => {
      const more = await runJobPass(
        {
          provider: l2,
          registry,
          registryAddress: config.VERIFICATION_REGISTRY,
          readers,
          store,
          sender,
          licenses: () => delegation.delegated,
          maxSubmissionsPerTx: config.MAX_SUBMISSIONS_PER_TX,
          maxQueryResultBytes: Number(maxQueryResultBytes),
          log,
          onVotesSent: (jobs, votes) => {
            metrics.jobsAnswered.inc(jobs);
            metrics.votesSent.inc(votes);
          },
        },
        startBlock,
      );
      metrics.lastBlock.set(store.cursor() ?? 0);
      if (more) jobLoop?.wake();
      return more;
    },
    config.POLL_INTERVAL_MS,
    (error) => {
      metrics.passErrors.inc();
      logger.warn(`job pass failed: ${describe(error)} (retrying)`);
    },
  );

  // New jobs wake the loop at once when a WebSocket is configured; polling stays the fallback.
  let ws: WebSocketProvider | undefined;
  if (config.L2_WS_URL !== undefined) {
    try {
      ws = new WebSocketProvider(config.L2_WS_URL, chainId, { staticNetwork: true });
      await verificationRegistryAt(config.VERIFICATION_REGISTRY, ws).on(registry.filters.VerificationRequested(), () => jobLoop?.wake());
    } catch (error) {
      logger.warn(`the L2 WebSocket subscription failed (${describe(error)}); polling every ${config.POLL_INTERVAL_MS} ms`);
    }
  }
  heartbeatLoop.start();
  jobLoop.start();
  logger.info(`answering jobs for license(s) ${delegation.delegated.join(", ")} from block ${(store.cursor() ?? (await startBlock()) - 1) + 1}`);

  const health =
    config.NODE_HEALTH_PORT === undefined
      ? undefined
      : await startHealthServer(config.NODE_HEALTH_HOST, config.NODE_HEALTH_PORT, metrics, () => ({
          status: "ok",
          burner: burnerAddress,
          delegatedLicenses: delegation.delegated.map(String),
          lastProcessedBlock: store.cursor() ?? null,
        }));

  return {
    burner: burnerAddress,
    healthUrl: health?.url,
    async stop() {
      await jobLoop?.stop();
      await heartbeatLoop.stop();
      await sender.stop();
      await ws?.destroy();
      await health?.close();
      store.close();
      l2.destroy();
    },
  };
}

function l2Provider(urls: readonly string[]): Provider & { destroy(): void } {
  // No response cache: the node reads nonces and receipts it has just changed.
  const providers = urls.map((url) => new JsonRpcProvider(url, undefined, { cacheTimeout: -1, staticNetwork: true }));
  if (providers.length === 1) return providers[0];
  // Several URLs: ethers' FallbackProvider asks them in order and moves on when one stalls or fails.
  return new FallbackProvider(
    providers.map((provider, index) => ({ provider, priority: index + 1, stallTimeout: 2_000, weight: 1 })),
    undefined,
    { quorum: 1 },
  );
}

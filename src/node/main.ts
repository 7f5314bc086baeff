import path from "node:path";

import { formatEther, parseUnits, WebSocketProvider, type Provider } from "ethers";
import { pino, type Logger } from "pino";

import type { NodeLicense, NodeRegistry, VerificationRegistry } from "../../typechain-types/index.ts";
import { createSourceReaders } from "../chains/source-readers.ts";
import { PollingLoop } from "../common/polling-loop.ts";
import { BURNER_FILE, loadOrCreateBurner } from "./burner.ts";
import { measureCapacity } from "./capacity.ts";
import { redactedNodeConfig, type NodeConfig } from "./config.ts";
import { nodeLicenseAt, nodeRegistryAt, verificationRegistryAt } from "./contracts.ts";
import { NodeMetrics, startHealthServer } from "./health.ts";
import { startAttesting } from "./hub-client.ts";
import { runJobPass } from "./job-runner.ts";
import { L2Endpoints } from "./l2-endpoints.ts";
import { delegationInstructions, readDelegationStatus, type DelegationStatus } from "./licenses.ts";
import { jobsToAnswerAgain } from "./skipped-votes.ts";
import { NodeStateStore } from "./state-store.ts";
import { describeError } from "../common/describe-error.ts";
import { TxSender } from "./tx-sender.ts";

export const STATE_FILE = "node-state.sqlite";
const DELEGATION_CHECK_MS = 5_000;
const INSTRUCTIONS_EVERY_MS = 60_000;
const MAX_RETRY_DELAY_MS = 30_000;
const WS_RECONNECT_MS = 5_000;

export interface RunningNode {
  burner: string;
  /** The health and metrics URL, when a port was configured. */
  healthUrl?: string;
  /** Finishes the pass in progress and the transaction being sent, then stops; journaled state is kept. Idempotent. */
  stop(): Promise<void>;
}

/** Thrown by `startNode` when its signal asked it to stop before it was running. */
export class StopRequested extends Error {
  constructor() {
    super("stopped before the node was running");
    this.name = "StopRequested";
  }
}

interface Contracts {
  registry: VerificationRegistry;
  nodeRegistry: NodeRegistry;
  license: NodeLicense;
}

/**
 * The circuit node (docs/node.md): its burner wallet, the delegation check, heartbeats and the job loop.
 * Waits, saying what to do, until a license of an allowlisted owner is delegated to its burner; then
 * heart-beats on schedule and answers jobs until stopped. Start-up reads that fail are retried with
 * backoff (and on the next L2 URL) rather than ending the process.
 */
export async function startNode(config: NodeConfig, options: { logger?: Logger; signal?: AbortSignal } = {}): Promise<RunningNode> {
  const logger = options.logger ?? pino({ level: config.LOG_LEVEL });
  const signal = options.signal;
  const cleanups: Array<() => Promise<void> | void> = [];
  const cleanUp = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  };
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      signal?.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
    });
  const throwIfStopped = async () => {
    if (signal?.aborted) {
      await cleanUp();
      throw new StopRequested();
    }
  };

  const burner = await loadOrCreateBurner(config.NODE_CACHE_DIR);
  const burnerAddress = burner.wallet.address;
  logger.info(
    { burner: burnerAddress },
    `burner wallet ${burnerAddress} (${burner.created ? "generated now" : "reused"}; key in ${path.join(config.NODE_CACHE_DIR, BURNER_FILE)}, mode 0600)`,
  );
  if (burner.tightenedMode) logger.warn("the burner key file was readable by others; its mode is now 0600");
  logger.info({ config: redactedNodeConfig(config) }, "node configuration");

  const metrics = new NodeMetrics();
  const endpoints = new L2Endpoints(config.L2_RPC_URLS);
  cleanups.push(() => endpoints.destroy());
  const failover = () => {
    if (endpoints.count > 1) logger.warn(`moving to L2 RPC URL #${endpoints.failover()}`);
  };
  let phase = "starting";
  let delegation: DelegationStatus = { delegated: [], undelegated: [] };
  let store: NodeStateStore | undefined;
  if (config.NODE_HEALTH_PORT !== undefined) {
    const health = await startHealthServer(config.NODE_HEALTH_HOST, config.NODE_HEALTH_PORT, metrics, () => ({
      status: phase,
      burner: burnerAddress,
      delegatedLicenses: delegation.delegated.map(String),
      lastProcessedBlock: store?.cursor() ?? null,
    }));
    cleanups.push(() => health.close());
    logger.info(`health and metrics on ${health.url}`);
  }

  /** Runs a start-up step until it succeeds or the node is asked to stop. */
  const retry = async <T>(what: string, work: () => Promise<T>): Promise<T> => {
    for (let attempt = 1; ; attempt += 1) {
      await throwIfStopped();
      try {
        return await work();
      } catch (error) {
        const delay = Math.min(MAX_RETRY_DELAY_MS, 1_000 * 2 ** (attempt - 1));
        logger.warn(`${what} failed: ${describeError(error)}; retrying in ${delay / 1000} s`);
        failover();
        await sleep(delay);
      }
    }
  };

  const contractCache = new WeakMap<Provider, Contracts>();
  let addresses: { nodeRegistry: string; license: string } | undefined;
  const contracts = (): Contracts => {
    const provider = endpoints.current;
    let found = contractCache.get(provider);
    if (found === undefined) {
      found = {
        registry: verificationRegistryAt(config.VERIFICATION_REGISTRY, provider),
        nodeRegistry: nodeRegistryAt(addresses!.nodeRegistry, provider),
        license: nodeLicenseAt(addresses!.license, provider),
      };
      contractCache.set(provider, found);
    }
    return found;
  };
  const chain = await retry("reading the L2 chain and the registry", async () => {
    const provider = endpoints.current;
    const registry = verificationRegistryAt(config.VERIFICATION_REGISTRY, provider);
    const nodeRegistry = await registry.NODE_REGISTRY();
    addresses = { nodeRegistry, license: await nodeRegistryAt(nodeRegistry, provider).LICENSE() };
    const [network, jobTimeout, genesis] = await Promise.all([provider.getNetwork(), registry.jobTimeout(), provider.getBlock(0)]);
    return { chainId: network.chainId, jobTimeout: Number(jobTimeout), genesisHash: genesis?.hash };
  });

  const journal = new NodeStateStore(path.join(config.NODE_CACHE_DIR, STATE_FILE));
  store = journal;
  cleanups.push(() => journal.close());
  if (journal.anchor(`${chain.chainId}:${config.VERIFICATION_REGISTRY}:${chain.genesisHash}`)) {
    logger.warn("the journal in the cache directory belonged to another chain or registry: cleared");
  }
  const { evmRpc, ...readers } = createSourceReaders({
    evm: { urls: config.EVM_RPC_URLS, timeoutMs: config.UPSTREAM_TIMEOUT_MS },
    solana: { urls: config.SOLANA_RPC_URLS, timeoutMs: config.UPSTREAM_TIMEOUT_MS },
  });
  const capacity = await retry("the start-up benchmark of the source RPCs", () => measureCapacity({ evmRpc, solana: readers.solana }));
  logger.info(
    { capacity },
    `capacity: ${capacity.jobsPerMinute} jobs/min (source latency: Ethereum ${capacity.evmLatencyMs} ms, Solana ${capacity.solanaLatencyMs} ms; ${capacity.readsPerSecond} reads/s)`,
  );

  const log = (level: "debug" | "info" | "warn" | "error", message: string) => logger[level](message);
  let jobLoop: PollingLoop<boolean> | undefined;
  const sender = new TxSender({
    wallet: burner.wallet,
    provider: () => endpoints.current,
    store: journal,
    chainId: chain.chainId,
    feeBumpAfterMs: config.FEE_BUMP_AFTER_MS,
    maxFeePerGas: parseUnits(String(config.MAX_FEE_PER_GAS_GWEI), "gwei"),
    log,
    onUpstreamError: failover,
    onVotesLost: (block) => {
      if (block !== undefined) journal.requestRescan(block);
      jobLoop?.wake();
    },
    onMined: (tx, receipt) => {
      if (tx.kind !== "submitResults") return;
      const skipped = jobsToAnswerAgain(receipt, contracts().registry, burnerAddress);
      if (skipped.length === 0) return;
      logger.info(`jobs ${skipped.join(", ")}: a license voted meanwhile elsewhere or left this node; answering again with the others`);
      const block = journal.forgetSkippedVotes(tx.id, skipped);
      if (block !== undefined) journal.requestRescan(block);
      jobLoop?.wake();
    },
    onReverted: (tx) => {
      metrics.transactions.inc({ kind: tx.kind, outcome: "reverted" });
      logger.error(`transaction ${tx.id} (${tx.kind}) reverted; its votes will be sent again if their jobs are still open`);
    },
  });
  cleanups.push(() => sender.stop());
  await retry("resuming the journal", () => sender.recover());

  let lastInstructionsAt = 0;
  const checkDelegation = async () => {
    const { license, nodeRegistry } = contracts();
    const previous = delegation.delegated;
    delegation = await readDelegationStatus({ license, nodeRegistry }, config.OWNERS_ALLOWLIST, burnerAddress);
    metrics.delegatedLicenses.set(delegation.delegated.length);
    const lost = previous.filter((id) => !delegation.delegated.includes(id));
    const gained = delegation.delegated.filter((id) => !previous.includes(id));
    if (lost.length > 0) logger.warn(`license(s) ${lost.join(", ")} no longer delegated to this node (transferred or undelegated): not voting for them`);
    if (gained.length > 0) logger.info(`voting for license(s) ${gained.join(", ")}`);
    if (delegation.delegated.length === 0 && Date.now() - lastInstructionsAt >= INSTRUCTIONS_EVERY_MS) {
      lastInstructionsAt = Date.now();
      logger.warn(delegationInstructions(delegation, config.OWNERS_ALLOWLIST, burnerAddress, addresses!.nodeRegistry));
    }
  };
  const warnIfPoor = async () => {
    const balance = await endpoints.current.getBalance(burnerAddress);
    if (balance < config.MIN_BURNER_BALANCE_WEI) {
      logger.warn(`the burner ${burnerAddress} has ${formatEther(balance)} ETH on L2, below ${formatEther(config.MIN_BURNER_BALANCE_WEI)}: send it gas money`);
    }
  };

  phase = "waiting for delegation";
  await retry("reading the burner's balance", warnIfPoor);
  for (;;) {
    await checkDelegation().catch((error: unknown) => {
      logger.warn(`delegation check failed: ${describeError(error)}`);
      failover();
    });
    if (delegation.delegated.length > 0) break;
    await throwIfStopped();
    await sleep(DELEGATION_CHECK_MS);
  }

  // Licenses are live only after a heartbeat: the first one must be mined before votes count.
  phase = "sending the first heartbeat";
  const heartbeatData = () => contracts().nodeRegistry.interface.encodeFunctionData("heartbeat(uint32)", [capacity.jobsPerMinute]);
  const first = await retry("sending the first heartbeat", () => sender.send("heartbeat", addresses!.nodeRegistry, heartbeatData()));
  logger.info("first heartbeat sent; waiting for it to be mined");
  const stopped = new Promise<"stopped">((resolve) => signal?.addEventListener("abort", () => resolve("stopped"), { once: true }));
  if ((await Promise.race([first.outcome, stopped])) === "stopped") await throwIfStopped();

  const heartbeatLoop = new PollingLoop(
    async () => {
      await checkDelegation();
      if (delegation.delegated.length === 0) return;
      const { outcome } = await sender.send("heartbeat", addresses!.nodeRegistry, heartbeatData());
      void outcome.then((result) => metrics.transactions.inc({ kind: "heartbeat", outcome: result }));
      await warnIfPoor();
    },
    config.HEARTBEAT_INTERVAL_SECONDS * 1000,
    (error) => {
      logger.warn(`heartbeat failed: ${describeError(error)} (retrying at the next tick)`);
      failover();
    },
  );
  cleanups.push(() => heartbeatLoop.stop());

  const startBlock = async () => {
    if (config.START_BLOCK !== undefined) return config.START_BLOCK;
    // No journal yet: jobs older than one timeout are closed. Blocks come at least once a second here.
    return Math.max(0, (await endpoints.current.getBlockNumber()) - chain.jobTimeout);
  };
  const loop = new PollingLoop(
    async () => {
      const { registry } = contracts();
      const more = await runJobPass(
        {
          provider: endpoints.current,
          registry,
          registryAddress: config.VERIFICATION_REGISTRY,
          readers,
          store: journal,
          sender,
          licenses: () => delegation.delegated,
          maxSubmissionsPerTx: config.MAX_SUBMISSIONS_PER_TX,
          maxGasPerTx: config.MAX_GAS_PER_TX,
          confirmations: config.CONFIRMATIONS,
          logBlockRange: config.LOG_BLOCK_RANGE,
          maxJobsPerPass: config.MAX_JOBS_PER_PASS,
          log,
          onVotesSent: (jobs, votes) => {
            metrics.jobsAnswered.inc(jobs);
            metrics.votesSent.inc(votes);
          },
        },
        startBlock,
      );
      metrics.lastBlock.set(journal.cursor() ?? 0);
      if (more) loop.wake();
      return more;
    },
    config.POLL_INTERVAL_MS,
    (error) => {
      metrics.passErrors.inc();
      logger.warn(`job pass failed: ${describeError(error)} (retrying)`);
      failover();
    },
  );
  jobLoop = loop;
  // The job loop stops first (the cleanups run in reverse order).
  cleanups.push(() => loop.stop());

  // New jobs wake the loop at once when a WebSocket is configured; polling stays the fallback.
  if (config.L2_WS_URL !== undefined) cleanups.push(subscribeToJobs(config.L2_WS_URL, chain.chainId, config.VERIFICATION_REGISTRY, () => loop.wake(), logger));
  // Attestations: one outbound WebSocket to the API's hub, when configured.
  const hub = startAttesting(config, { wallet: burner.wallet, chainId: chain.chainId, evmRpc, evm: readers.evm, licenses: () => delegation.delegated, logger, metrics });
  if (hub !== undefined) cleanups.push(hub);
  heartbeatLoop.start();
  loop.start();
  phase = "running";
  await throwIfStopped();
  logger.info(`answering jobs for license(s) ${delegation.delegated.join(", ")} from block ${(journal.cursor() ?? (await startBlock()) - 1) + 1}`);

  let stopping: Promise<void> | undefined;
  return {
    burner: burnerAddress,
    async stop() {
      stopping ??= cleanUp();
      await stopping;
    },
  };
}

/**
 * Wakes the job loop on every `VerificationRequested` pushed over the WebSocket. The socket is Node's own
 * (an error on it is an event, never an uncaught exception); when it closes, it is opened again after
 * WS_RECONNECT_MS, while polling carries on. Returns the unsubscribe function.
 */
function subscribeToJobs(url: string, chainId: bigint, registryAddress: string, wake: () => void, logger: Logger): () => Promise<void> {
  let provider: WebSocketProvider | undefined;
  let stopped = false;
  let warned = false;
  let timer: NodeJS.Timeout | undefined;
  const connect = () => {
    if (stopped) return;
    const socket = new WebSocket(url);
    socket.addEventListener("error", () => undefined); // followed by "close", handled there
    socket.addEventListener("close", () => {
      if (stopped) return;
      if (!warned) logger.warn(`the L2 WebSocket is closed; polling meanwhile, reconnecting every ${WS_RECONNECT_MS / 1000} s`);
      warned = true;
      void provider?.destroy();
      provider = undefined;
      timer = setTimeout(connect, WS_RECONNECT_MS);
    });
    socket.addEventListener("open", () => {
      if (warned) logger.info("the L2 WebSocket is back");
      warned = false;
    });
    provider = new WebSocketProvider(socket as never, chainId, { staticNetwork: true });
    const registry = verificationRegistryAt(registryAddress, provider);
    void registry
      .on(registry.filters.VerificationRequested(), wake)
      .catch((error: unknown) => logger.warn(`subscribing to new jobs failed: ${describeError(error)}`));
  };
  connect();
  return async () => {
    stopped = true;
    clearTimeout(timer);
    await provider?.destroy();
  };
}

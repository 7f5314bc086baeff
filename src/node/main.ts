import path from "node:path";

import { parseUnits } from "ethers";
import { pino, type Logger } from "pino";

import { createSourceReaders } from "../chains/source-readers.ts";
import { HashPinnedEvmReads } from "../chains/evm/hash-pinned-reads.ts";
import { BURNER_FILE, loadOrCreateBurner } from "./burner.ts";
import { warnIfBurnerIsPoor } from "./burner-balance.ts";
import { redactedNodeConfig, type NodeConfig } from "./config.ts";
import { ContractsByProvider } from "./contracts.ts";
import { DelegationWatcher } from "./delegation-watcher.ts";
import { NodeMetrics, serveHealth, type HealthStatus } from "./health.ts";
import { heartbeatLoop, sendFirstHeartbeat, type HeartbeatOptions } from "./heartbeats.ts";
import { startAttesting } from "./hub-client.ts";
import { createJobLoop, type JobLoop } from "./job-loop.ts";
import { failoverOnError, L2Endpoints } from "./l2-endpoints.ts";
import { openLicenseAccounts } from "./license-accounts.ts";
import { Lifecycle } from "./lifecycle.ts";
import { lostVotesCallbacks } from "./lost-votes.ts";
import { benchmarkSources, discoverChain, openJournal, startupSteps } from "./startup.ts";
import { TxSender } from "./tx-sender.ts";
import { QosMonitor } from "./monitor/qos-monitor.ts";
import { PeerRounds, registryEpochs } from "./monitor/peer-rounds.ts";
import { RewardsVoter } from "./rewards-voter.ts";
import { wakeOnNewJobs } from "./wake-up.ts";

export { StopRequested } from "./lifecycle.ts";
export { STATE_FILE } from "./startup.ts";

export interface RunningNode {
  burner: string;
  /** Finishes the pass in progress and the transaction being sent, then stops; journaled state is kept. Idempotent. */
  stop(): Promise<void>;
}

/**
 * The circuit node (docs/node.md), wired: its burner, the L2 chain and journal, the capacity benchmark,
 * the delegation watcher, its licenses' fee accounts opened, the first heartbeat, then the heartbeat and
 * job loops. Start-up reads that fail are retried with backoff (on the next L2 URL) rather than ending the
 * process; a stop signal during start-up throws `StopRequested` once what started is stopped again.
 */
export async function startNode(config: NodeConfig, options: { logger?: Logger; signal?: AbortSignal } = {}): Promise<RunningNode> {
  const logger = options.logger ?? pino({ level: config.LOG_LEVEL });
  const log = logger.child({ component: "node" });
  const lifecycle = new Lifecycle(options.signal);
  const burner = await loadOrCreateBurner(config.NODE_CACHE_DIR);
  const burnerAddress = burner.wallet.address;
  const keyFile = path.join(config.NODE_CACHE_DIR, BURNER_FILE);
  log.info({ burner: burnerAddress, generated: burner.created, keyFile }, "burner wallet");
  if (burner.tightenedMode) log.warn({ keyFile }, "the burner key file was readable by others; its mode is now 0600");
  log.info({ config: redactedNodeConfig(config) }, "node configuration");

  const metrics = new NodeMetrics();
  const endpoints = new L2Endpoints(config.L2_RPC_URLS);
  lifecycle.onStop(() => endpoints.destroy());
  const failover = failoverOnError(endpoints, logger);
  // What /healthz reports, filled in as start-up gets there.
  const health: HealthStatus = {
    phase: "starting",
    burner: burnerAddress,
    delegatedLicenses: () => [],
    lastProcessedBlock: () => undefined,
  };
  const closeHealth = await serveHealth(config, metrics, health, logger);
  if (closeHealth !== undefined) lifecycle.onStop(closeHealth);

  const step = startupSteps(lifecycle, logger, failover);
  const chain = await step("reading the L2 chain and the registry", () => discoverChain(endpoints.current, config.VERIFICATION_REGISTRY));
  const contracts = new ContractsByProvider(chain.addresses);
  const store = openJournal(config.NODE_CACHE_DIR, chain, logger);
  health.lastProcessedBlock = () => store.cursor();
  lifecycle.onStop(() => store.close());
  const { evmRpc, ...readers } = createSourceReaders({
    evm: { urls: config.EVM_RPC_URLS, timeoutMs: config.UPSTREAM_TIMEOUT_MS },
    solana: { urls: config.SOLANA_RPC_URLS, timeoutMs: config.UPSTREAM_TIMEOUT_MS },
  });
  const capacity = await benchmarkSources(step, { evmRpc, solana: readers.solana }, logger);

  let jobs: JobLoop | undefined; // the sender's callbacks wake it; it needs the sender, so it comes after
  const sender = new TxSender({
    wallet: burner.wallet,
    provider: () => endpoints.current,
    store,
    chainId: chain.chainId,
    feeBumpAfterMs: config.FEE_BUMP_AFTER_MS,
    maxFeePerGas: parseUnits(String(config.MAX_FEE_PER_GAS_GWEI), "gwei"),
    logger,
    onUpstreamError: failover,
    ...lostVotesCallbacks({
      journal: store,
      registry: () => contracts.on(endpoints.current).registry,
      burner: burnerAddress,
      metrics,
      logger,
      wakeJobLoop: () => jobs?.loop.wake(),
    }),
  });
  lifecycle.onStop(() => sender.stop());
  await step("resuming the journal", () => sender.recover());

  health.phase = "waiting for delegation";
  const checkBalance = () => warnIfBurnerIsPoor(endpoints.current, burnerAddress, config.MIN_BURNER_BALANCE_WEI, log);
  await step("reading the burner's balance", checkBalance);
  const owners = config.OWNERS_ALLOWLIST;
  const nodeRegistryAddress = chain.addresses.nodeRegistry;
  const watcher = new DelegationWatcher({
    contracts: () => contracts.on(endpoints.current),
    nodeRegistryAddress,
    owners,
    burner: burnerAddress,
    metrics,
    logger,
  });
  health.delegatedLicenses = () => watcher.delegated;
  await watcher.waitForDelegation(lifecycle, failover);
  // Sent before the first heartbeat, by the same sender: the accounts are open once the licenses are live.
  const opening = await openLicenseAccounts(watcher.delegated, {
    registry: () => contracts.on(endpoints.current).registry,
    registryAddress: chain.addresses.registry,
    sender,
    logger,
  });
  void opening?.outcome.then((outcome) => metrics.transactions.inc({ kind: "openLicenseAccounts", outcome }));

  health.phase = "sending the first heartbeat";
  const heartbeatData = contracts
    .on(endpoints.current)
    .nodeRegistry.interface.encodeFunctionData("heartbeat(uint32)", [capacity.jobsPerMinute]);
  const intervalMs = config.HEARTBEAT_INTERVAL_SECONDS * 1000;
  const heartbeats: HeartbeatOptions = {
    sender,
    nodeRegistryAddress,
    heartbeatData,
    delegation: watcher,
    checkBalance,
    intervalMs,
    metrics,
    logger,
    onError: failover,
  };
  await sendFirstHeartbeat(heartbeats, lifecycle, step);
  const heartbeat = heartbeatLoop(heartbeats);
  lifecycle.onStop(() => heartbeat.stop());

  const jobReads = new HashPinnedEvmReads(evmRpc);
  jobs = createJobLoop({
    config,
    chain,
    endpoints,
    contracts,
    // Jobs read Ethereum at a block named by its hash, and check it is still canonical before revealing.
    readers: { evm: jobReads, solana: readers.solana },
    canonical: jobReads,
    journal: store,
    sender,
    operator: burnerAddress,
    delegation: watcher,
    metrics,
    logger,
    onError: failover,
  });
  const { loop } = jobs;
  lifecycle.onStop(() => loop.stop()); // before the heartbeats, the sender and the journal it uses (reverse order)
  if (config.L2_WS_URL !== undefined)
    lifecycle.onStop(wakeOnNewJobs(config.L2_WS_URL, chain.addresses.registry, () => loop.wake(), logger));
  // The node as a monitor of its peers: the hub's round results, tallied for the QoS reports.
  const peers =
    config.QOS_REPORTS === undefined
      ? undefined
      : new PeerRounds({
          self: burnerAddress,
          licenses: () => watcher.delegated,
          epochOf: registryEpochs(() => contracts.on(endpoints.current).registry),
          isLiveOperatorOf: (signer, licenseIds) => contracts.on(endpoints.current).nodeRegistry.isLiveOperatorOf(signer, [...licenseIds]),
          metrics,
          logger,
        });
  const hub = startAttesting(config, {
    wallet: burner.wallet,
    chainId: chain.chainId,
    evmRpc,
    evm: readers.evm,
    l2: () => endpoints.current,
    onL2Error: failover,
    licenses: () => watcher.delegated,
    logger,
    metrics,
    peers,
  });
  if (hub !== undefined) lifecycle.onStop(hub);
  const monitor =
    config.QOS_REPORTS === undefined
      ? undefined
      : new QosMonitor({
          registry: () => contracts.on(endpoints.current).registry,
          l2: () => endpoints.current,
          readers,
          evmRpc,
          solanaHealth: () => readers.solana.checkHealth(),
          api:
            config.QOS_API_URL === undefined || config.QOS_API_KEY === undefined
              ? undefined
              : { url: config.QOS_API_URL, key: config.QOS_API_KEY },
          qosReports: config.QOS_REPORTS,
          licenses: () => watcher.delegated,
          sender,
          probeIntervalMs: config.QOS_PROBE_INTERVAL_SECONDS * 1000,
          reportIntervalMs: config.QOS_REPORT_INTERVAL_SECONDS * 1000,
          peers,
          metrics,
          logger,
          onError: failover,
        });
  if (monitor !== undefined) lifecycle.onStop(() => monitor.stop());
  const rewardsVoter =
    config.REWARD_POOLS === undefined
      ? undefined
      : new RewardsVoter({
          l2: { request: (method, params) => endpoints.current.send(method, params) },
          rewardPools: config.REWARD_POOLS,
          licenses: () => watcher.delegated,
          sender,
          intervalMs,
          metrics,
          logger,
          onError: failover,
        });
  if (rewardsVoter !== undefined) lifecycle.onStop(() => rewardsVoter.stop());
  heartbeat.start();
  loop.start();
  monitor?.start();
  rewardsVoter?.start();
  health.phase = "running";
  await lifecycle.throwIfStopped();
  const fromBlock = (store.cursor() ?? (await jobs.startBlock()) - 1) + 1;
  log.info({ licenses: watcher.delegated.map(String), fromBlock }, "answering jobs");
  return { burner: burnerAddress, stop: () => lifecycle.stop() };
}

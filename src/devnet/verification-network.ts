import { randomBytes } from "node:crypto";
import { rm } from "node:fs/promises";
import path from "node:path";

import { Contract, ContractFactory, NonceManager, Wallet, ZeroAddress } from "ethers";
import hre from "hardhat";

import { NodeRegistry__factory } from "../../typechain-types/index.ts";
import { HUB_PATH } from "../common/hub-protocol.ts";
import { loadApiConfig } from "../api/config.ts";
import { ApiKeys } from "../api/keys/api-keys.ts";
import { waitFor } from "../common/wait-for.ts";
import { CHALLENGER_ROLE } from "@avn/protocol/qos";

import { spawnApiService } from "./api-service.ts";
import { STACK_ATTESTATION_EVM_CONFIRMATIONS } from "./stack-attestation.ts";
import { seedChallengeHoldings } from "./challenge-holdings.ts";
import { startStackChallenger } from "./stack-challenger.ts";
import type { ChallengeTarget } from "../challenger/challenger.ts";
import { startL1HashRecorder, type L1HashRecorder } from "./l1-hash-recorder.ts";
import { startRedisServer, type RedisServer } from "./redis-server.ts";
import { loadOrCreateBurner } from "../node/burner.ts";
import { devAccount } from "./accounts.ts";
import { type DevAccount } from "../common/stack-file.ts";
import { devnetProvider } from "./op-devnet.ts";
import { spawnCircuitNode, type CircuitNodeProcess } from "./circuit-nodes.ts";
import { describeExit, formatSeconds, Supervisor, type RestartBackoff } from "./supervisor.ts";
import {
  demoConditions,
  demoSection,
  gameConditionHash,
  seedEvmDemo,
  seedSolanaDemo,
  type EvmDemoHoldings,
  type SolanaDemoHoldings,
} from "./demo-holdings.ts";
import { GAME_COLLATERAL, setUpNetwork, stakeCollateral } from "./network-setup.ts";
import { startSolanaRpcServer, type SolanaRpcServer } from "./solana/litesvm-rpc-server.ts";
import { SolanaTokenLedger } from "./solana/token-ledger.ts";
import type { StackFile } from "../common/stack-file.ts";

/** anvil development accounts by role (0 deploys, 9 proposes outputs: see DEVNET_ACCOUNTS). */
export const NETWORK_ACCOUNTS = {
  /** The owners of the nodes' licenses, in order: the local stack runs the first three nodes. */
  nodeOwners: [1, 2, 3, 6],
  consumer: 4,
  tokenHolder: 5,
  demoHolder: 7,
  demoEmpty: 8,
  demoCollector: 10,
  l1HashKeeper: 11,
  challenger: 12,
} as const;
/** The nodes `npm start` runs; a test may run up to `NETWORK_ACCOUNTS.nodeOwners.length`. */
export const DEFAULT_NODE_COUNT = 3;
/** L2 ether the demo collector gets for its claims (the account is past anvil's ten funded ones). */
const COLLECTOR_L2_ETHER = 10n ** 18n;
/** The example game: a verified balance of at least this much of the demo ERC-20 earns an item. */
export const GAME_MIN_BALANCE = 1n;
export const GAME_MAX_RESULT_AGE = 3_600n;
/** The demo ERC-20's balances mapping slot, which the game's proof claims pin (OpenZeppelin's ERC20: 0). */
export const GAME_PROOF_BALANCES_SLOT = 0n;

export interface VerificationNetworkInput {
  projectRoot: string;
  /** Where node caches, logs and the API key database go (cleared first: each start is a new network). */
  workDir: string;
  l1: { rpcUrl: string; chainId: number };
  l2: { rpcUrl: string; wsUrl: string; chainId: number };
  deployer: DevAccount;
  contracts: {
    l1PrimaryToken: string;
    l1StandardBridge: string;
    l2: Record<
      | "PrimaryToken"
      | "StakedToken"
      | "NodeLicense"
      | "NodeRegistry"
      | "VerificationRegistry"
      | "AttestationVerifier"
      | "StorageProofVerifier"
      | "L1BlockHashes"
      | "QosReports"
      | "RewardPools",
      string
    > & {
      /** `?attest=true&eas=true` answers with its export's call (docs/eas.md); without it, 501. */
      AttestationExporter?: string;
    };
  };
  /** Port of the API (0 = any free port). */
  apiPort: number;
  /** How many nodes (default `DEFAULT_NODE_COUNT`, at most `NETWORK_ACCOUNTS.nodeOwners.length`). */
  nodeCount?: number;
  /** Extra environment for the nodes (tests shorten intervals). */
  nodeEnv?: Record<string, string>;
  /** Extra environment for one node, by index, over `nodeEnv` (a test gives one node sources of its own). */
  nodeEnvs?: ReadonlyArray<Record<string, string> | undefined>;
  /** Extra environment for the API (benchmarks lift the demo key's rate limit). */
  apiEnv?: Record<string, string>;
  /**
   * API processes serving with the hub on (`API_WORKERS`; default 1). With more than one, a redis-server of
   * the network's own carries the rounds between them when it is installed; else the cluster's primary does.
   */
  apiWorkers?: number;
  /** The API's key database (`API_KEYS_DB`: a `postgres://` URL); a SQLite file in `workDir` by default. */
  apiKeysDb?: string;
  /** The claim platform that may mint bought game items (the credits channel's); none by default. */
  gameMinter?: string;
  onProgress: (line: string) => void;
  /**
   * Runs the network's challenger (`npm run challenger`, account NETWORK_ACCOUNTS.challenger) with this mean
   * time between bursts, over challenge holdings of its own. Its account must already hold CHALLENGER_ROLE
   * (the local stack's first governance proposal grants it). None by default: the tests' jobs stay theirs.
   */
  challenger?: {
    meanIntervalSeconds: number;
    /** The source chains its challenge holdings are on (default both). */
    chains?: ReadonlyArray<ChallengeTarget["chain"]>;
  };
  /**
   * Called once a node has been restarted (by `restartNode`, or by its supervisor after a crash) and `stack.nodes` holds
   * its new `pid` (the local stack rewrites its file).
   */
  onNodeRestarted?: () => Promise<void>;
  /** The wait before a crashed node is restarted (default `DEFAULT_RESTART_BACKOFF`: 1 s doubling to 30 s). */
  restartBackoff?: Partial<RestartBackoff>;
}

export interface VerificationNetwork {
  solana: SolanaRpcServer;
  ledger: SolanaTokenLedger;
  /** The API's process (a cluster of `workers` when more than one; `pid` is the API itself, or the cluster's primary). */
  api: { url: string; workers: number; logFile: string; pid: number };
  /** The Redis the API's processes share (with more than one, when redis-server is installed). */
  redis?: RedisServer;
  apiKey: string;
  /**
   * Each node's current process: a crashed node's restart replaces its entry. A crash is an exit nobody asked for
   * (`child.kill("SIGKILL")`, a failure): its supervisor restarts it. `stop()` on an entry stops that node for good,
   * until `restartNode`.
   */
  nodes: CircuitNodeProcess[];
  evmDemo: EvmDemoHoldings;
  svmDemo: SolanaDemoHoldings;
  gameItem: string;
  /** The keeper recording each L1 block in L1BlockHashes. */
  l1HashRecorder: L1HashRecorder;
  /** What this part adds to the stack file. */
  stack: Pick<StackFile, "solana" | "api" | "accounts" | "nodes" | "demo" | "challenger"> & { contracts: { l2: Record<string, string> } };
  /** Starts node `index` again with its cache (stopping it first if it runs), and supervises it again after a stop. */
  restartNode(index: number): Promise<CircuitNodeProcess>;
  /**
   * Resolves with node `index`'s next process once its supervisor has restarted it after a crash (`nodes[index]` and
   * the stack's `pid` are the new one's by then); rejects if the node is stopped first.
   */
  nodeRestarted(index: number): Promise<CircuitNodeProcess>;
  /** How many times node `index` was restarted after a crash (not counting `restartNode`). */
  nodeRestarts(index: number): number;
  stop(): Promise<void>;
}

/**
 * The verification network on a deployed devnet: demo holdings on the EVM source (the local L1) and on a
 * LiteSVM Solana endpoint; licenses sold and delegated to `nodeCount` circuit nodes with distinct owners
 * and burners; the consumer's collateral; the example game; the API with a demo key; then the nodes, each
 * its own process, started and awaited until their first heartbeat is on-chain.
 */
export async function startVerificationNetwork(input: VerificationNetworkInput): Promise<VerificationNetwork> {
  const { onProgress } = input;
  const nodeCount = input.nodeCount ?? DEFAULT_NODE_COUNT;
  if (nodeCount < 1 || nodeCount > NETWORK_ACCOUNTS.nodeOwners.length)
    throw new Error(`nodeCount must be 1 to ${NETWORK_ACCOUNTS.nodeOwners.length} (the node owners' accounts); it is ${nodeCount}`);
  await rm(input.workDir, { recursive: true, force: true });
  const l1 = devnetProvider(input.l1.rpcUrl, input.l1.chainId);
  const l2 = devnetProvider(input.l2.rpcUrl, input.l2.chainId);
  const cleanups: Array<() => Promise<void>> = [];
  const stop = async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    l1.destroy();
    l2.destroy();
  };
  try {
    onProgress(
      "Seeding the demo holdings: ERC-20, ERC-721 and ERC-1155 on the EVM source (the local L1), SPL, Token-2022 and NFTs on the Solana endpoint…",
    );
    const collector = devAccount(NETWORK_ACCOUNTS.demoCollector);
    const evmDemo = await seedEvmDemo(
      new NonceManager(new Wallet(input.deployer.privateKey, l1)),
      devAccount(NETWORK_ACCOUNTS.demoHolder).address,
      devAccount(NETWORK_ACCOUNTS.demoEmpty).address,
      collector.address,
    );
    const ledger = await SolanaTokenLedger.create();
    const solana = await startSolanaRpcServer(ledger);
    cleanups.push(() => solana.close());
    const svmDemo = await seedSolanaDemo(ledger);
    const conditions = await demoConditions(evmDemo, svmDemo, input.l2.chainId);

    const owners = NETWORK_ACCOUNTS.nodeOwners.slice(0, nodeCount).map((index) => devAccount(index));
    const cacheDirs = owners.map((_, index) => path.join(input.workDir, "nodes", `node-${index + 1}`));
    const burners = await Promise.all(cacheDirs.map(async (dir) => (await loadOrCreateBurner(dir)).wallet.address));
    const consumer = devAccount(NETWORK_ACCOUNTS.consumer);
    const tokenHolder = devAccount(NETWORK_ACCOUNTS.tokenHolder);
    const challenger = input.challenger === undefined ? undefined : devAccount(NETWORK_ACCOUNTS.challenger);
    if (challenger !== undefined) {
      const roles = new Contract(input.contracts.l2.NodeRegistry, ["function hasRole(bytes32, address) view returns (bool)"], l2);
      if (!((await roles.getFunction("hasRole")(CHALLENGER_ROLE, challenger.address)) as boolean))
        throw new Error(`the challenger ${challenger.address} does not hold CHALLENGER_ROLE on NodeRegistry: governance grants it`);
      // Gas for its collateral's approval and stake, and for its challenges (the account is past anvil's funded ten).
      const funder = new NonceManager(new Wallet(input.deployer.privateKey, l2));
      await (await funder.sendTransaction({ to: challenger.address, value: COLLECTOR_L2_ETHER })).wait();
    }
    const licenseIds = await setUpNetwork({
      l1,
      l2,
      deployer: input.deployer,
      contracts: input.contracts,
      operators: owners.map((owner, index) => ({ owner, burner: burners[index] })),
      consumer,
      tokenHolder,
      challenger,
      onProgress,
    });

    onProgress("Deploying the example game item and funding its collateral…");
    const artifact = await hre.artifacts.readArtifact("GameItem");
    const deployer = new NonceManager(new Wallet(input.deployer.privateKey, l2));
    // The game takes the attestation verifier (it reads the registry from it) and the storage-proof
    // verifier: the job, attested, verdict and proof claim paths; its condition is the first demo condition's.
    const game = await new ContractFactory(artifact.abi, artifact.bytecode, deployer).deploy(
      input.contracts.l2.AttestationVerifier,
      evmDemo.erc20,
      GAME_MIN_BALANCE,
      GAME_MAX_RESULT_AGE,
      input.gameMinter ?? ZeroAddress,
      gameConditionHash(conditions),
      // Proofs of the demo ERC-20 (OpenZeppelin's layout: the balances mapping at slot 0).
      input.contracts.l2.StorageProofVerifier,
      GAME_PROOF_BALANCES_SLOT,
    );
    await game.waitForDeployment();
    const gameItem = await game.getAddress();
    await stakeCollateral(l2, consumer, input.contracts.l2, gameItem, GAME_COLLATERAL);
    await (await deployer.sendTransaction({ to: collector.address, value: COLLECTOR_L2_ETHER })).wait();
    // The keeper of L1BlockHashes records each L1 block the L2 learns, so proofs stay verifiable (docs/proofs.md).
    const keeper = devAccount(NETWORK_ACCOUNTS.l1HashKeeper);
    await (await deployer.sendTransaction({ to: keeper.address, value: COLLECTOR_L2_ETHER })).wait();
    const l1HashRecorder = await startL1HashRecorder({
      l2,
      l2WsUrl: input.l2.wsUrl,
      l1BlockHashes: input.contracts.l2.L1BlockHashes,
      keeper,
      onError: (error) =>
        onProgress(`L1BlockHashes keeper: ${(error as Error)?.message ?? String(error)} (trying again at the next L2 block)`),
    });
    cleanups.push(() => l1HashRecorder.stop());

    const apiWorkers = input.apiWorkers ?? 1;
    // Several API processes share attestation rounds, node statistics and rate limits through Redis when
    // it is installed; without it the cluster's primary routes the rounds between its workers.
    const redis = apiWorkers > 1 ? await startRedisServer() : undefined;
    if (redis !== undefined) cleanups.push(() => redis.stop());
    onProgress(
      `Starting the API (${apiWorkers === 1 ? "one process" : `${apiWorkers} processes, sharing rounds through ${redis === undefined ? "the cluster's primary: redis-server is not installed" : "Redis"}`}) with a demo key and its attestation hub…`,
    );
    const keysFile = input.apiKeysDb ?? path.join(input.workDir, "api-keys.sqlite");
    const keys = await ApiKeys.open(keysFile);
    const apiKey = (await keys.create("demo")).key;
    // Each node probes the API with a key of its own, as a live operator would be given one.
    const probeKeys: string[] = [];
    for (let index = 0; index < nodeCount; index++) probeKeys.push((await keys.create(`node-${index + 1}-probe`)).key);
    await keys.close();
    const apiEnv: Record<string, string> = {
      API_PORT: String(input.apiPort),
      API_WORKERS: String(apiWorkers),
      // The instances seal every message on Redis with a secret of this run's own (docs/attestations.md).
      ...(redis === undefined ? {} : { REDIS_URL: redis.url, HUB_BUS_SECRET: randomBytes(32).toString("hex") }),
      EVM_RPC_URLS: input.l1.rpcUrl,
      SOLANA_RPC_URLS: solana.url,
      API_KEYS_DB: keysFile,
      LOG_LEVEL: "warn",
      // The attestation hub: nodes connect out to it; it reads their licenses on the L2.
      ATTESTATION_L2_RPC_URL: input.l2.rpcUrl,
      // The RPC front pipes WebSocket upgrades to the L2 node: the hub follows its heads there (chain time).
      ATTESTATION_L2_WS_URL: input.l2.wsUrl,
      ATTESTATION_NODE_REGISTRY: input.contracts.l2.NodeRegistry,
      ATTESTATION_VERIFIER: input.contracts.l2.AttestationVerifier,
      ...(input.contracts.l2.AttestationExporter === undefined ? {} : { ATTESTATION_EXPORTER: input.contracts.l2.AttestationExporter }),
      ATTESTATION_EVM_CONFIRMATIONS: String(STACK_ATTESTATION_EVM_CONFIRMATIONS),
      // Heart-beats come every minute at most; a transferred license is noticed within this.
      ATTESTATION_RECHECK_MS: "5000",
      // ?proof=true answers at the keeper's latest recorded L1 block (the L2 is ATTESTATION_L2_RPC_URL's).
      PROOF_L1_BLOCK_HASHES: input.contracts.l2.L1BlockHashes,
      // GET /api/network/nodes: the registries' events on the L2 (ATTESTATION_L2_RPC_URL's), from its genesis.
      NETWORK_VERIFICATION_REGISTRY: input.contracts.l2.VerificationRegistry,
      NETWORK_QOS_REPORTS: input.contracts.l2.QosReports,
      // Webhooks to this machine's receivers (the stack's demo receiver, demo:webhooks): the SSRF guard is for live URLs.
      WEBHOOK_ALLOW_PRIVATE: "true",
      ...input.apiEnv,
    };
    loadApiConfig(apiEnv); // a wrong setting fails here, with every problem listed, not in the child's log
    // Its own process (`npm run api`), as an operator runs it: a cluster of `apiWorkers` on one port.
    const apiLogFile = path.join(input.workDir, "logs", "api.log");
    const api = await spawnApiService({
      projectRoot: input.projectRoot,
      env: apiEnv,
      logFile: apiLogFile,
    });
    cleanups.push(async () => void (await api.stop()));
    const hubUrl = `${api.url.replace(/^http/, "ws")}${HUB_PATH}`;

    onProgress(`Starting ${nodeCount} circuit nodes (logs in ${path.relative(process.cwd(), path.join(input.workDir, "logs"))})…`);
    const nodeEnvOf = (index: number): Record<string, string> => ({
      OWNERS_ALLOWLIST: owners[index].address,
      L2_RPC_URLS: input.l2.rpcUrl,
      L2_WS_URL: input.l2.wsUrl,
      VERIFICATION_REGISTRY: input.contracts.l2.VerificationRegistry,
      EVM_RPC_URLS: input.l1.rpcUrl,
      SOLANA_RPC_URLS: solana.url,
      POLL_INTERVAL_MS: "1000",
      CONFIRMATIONS: "0", // anvil never reorganizes
      // A loopback ws:// URL: the hub's default public URLs are its loopback URLs, and the node allows ws:// there.
      ATTESTATION_HUB_URLS: hubUrl,
      ATTESTATION_VERIFIER: input.contracts.l2.AttestationVerifier,
      // Every node a monitor: it probes its sources and the API, and reports the epoch's figures (docs/verification.md).
      QOS_REPORTS: input.contracts.l2.QosReports,
      QOS_API_URL: api.url,
      QOS_API_KEY: probeKeys[index],
      QOS_PROBE_INTERVAL_SECONDS: "10",
      QOS_REPORT_INTERVAL_SECONDS: "30",
      // And a voter of each ended epoch's rewards root.
      REWARD_POOLS: input.contracts.l2.RewardPools,
      LOG_LEVEL: "info",
      ...input.nodeEnv,
      ...input.nodeEnvs?.[index],
    });
    const spawnNode = (index: number) =>
      spawnCircuitNode(
        input.projectRoot,
        `node-${index + 1}`,
        cacheDirs[index],
        path.join(input.workDir, "logs", `node-${index + 1}.log`),
        nodeEnvOf(index),
      );
    // Each node under a supervisor of its own, which restarts it after a crash; `nodes[index]` is its current process,
    // whose `stop` stops the supervision too.
    const nodes: CircuitNodeProcess[] = [];
    const supervisors: Array<Supervisor<CircuitNodeProcess>> = [];
    // What the stack file says of each node, once known; the restarts keep its `pid` current (one object, shared with
    // the stack that embeds it).
    let stackNodes: StackFile["nodes"];
    const supervisedView = (index: number, node: CircuitNodeProcess): CircuitNodeProcess => ({
      ...node,
      stop: (signal) => supervisors[index].stop(signal),
    });
    const superviseNode = (index: number) =>
      Supervisor.start<CircuitNodeProcess>({
        start: () => spawnNode(index),
        backoff: input.restartBackoff,
        onExit: (exit) => onProgress(describeExit(`Circuit ${exit.process.name}`, exit, exit.process.logFile)),
        onRestart: async (node, { automatic }) => {
          nodes[index] = supervisedView(index, node);
          if (stackNodes !== undefined) stackNodes[index].pid = processId(node);
          await input.onNodeRestarted?.();
          if (automatic) onProgress(`Circuit ${node.name} restarted (pid ${node.child.pid}).`);
        },
        onError: (error, retryInMs) =>
          onProgress(
            retryInMs === undefined
              ? `Circuit node-${index + 1}: ${(error as Error)?.message ?? String(error)} (after its restart)`
              : `Circuit node-${index + 1} could not be restarted: ${(error as Error)?.message ?? String(error)} (trying again in ${formatSeconds(retryInMs)})`,
          ),
      });
    cleanups.push(async () => {
      await Promise.all(supervisors.map((supervisor) => supervisor.stop()));
    });
    const supervisorOf = (index: number) => {
      const supervisor = supervisors[index];
      if (supervisor === undefined) throw new RangeError(`there is no circuit node ${index} (the network runs ${nodeCount})`);
      return supervisor;
    };
    await Promise.all(
      owners.map(async (_, index) => {
        supervisors[index] = await superviseNode(index);
        nodes[index] = supervisedView(index, supervisors[index].current);
      }),
    );
    const nodeRegistry = NodeRegistry__factory.connect(input.contracts.l2.NodeRegistry, l2);
    for (const [index, burner] of burners.entries()) {
      await waitFor(`the first heartbeat of node ${index + 1}`, async () => {
        if (nodes[index].child.exitCode !== null) throw new Error(`circuit node ${index + 1} exited; see ${nodes[index].logFile}`);
        return (await nodeRegistry.heartbeatOf(burner)).timestamp > 0n;
      });
    }
    // Attested answers need the nodes admitted by the hub (they connect once their first heartbeat is mined).
    await waitFor("the nodes' connections to the attestation hub", async () => {
      const { nodes: admitted } = (await (await fetch(`${api.url}/attest/nodes`)).json()) as {
        nodes: Array<{ burner: string; connected: boolean }>;
      };
      return burners.every((burner) => admitted.some((node) => node.connected && node.burner === burner));
    });

    const challengerProcess =
      challenger === undefined || input.challenger === undefined
        ? undefined
        : await startStackChallenger({
            projectRoot: input.projectRoot,
            workDir: input.workDir,
            key: challenger.privateKey,
            l2RpcUrl: input.l2.rpcUrl,
            verificationRegistry: input.contracts.l2.VerificationRegistry,
            targets: (await seedChallengeHoldings(new NonceManager(new Wallet(input.deployer.privateKey, l1)), ledger)).filter(
              (target) => input.challenger?.chains?.includes(target.chain) ?? true,
            ),
            meanIntervalSeconds: input.challenger.meanIntervalSeconds,
            onProgress,
          });
    if (challengerProcess !== undefined) cleanups.push(async () => void (await challengerProcess.stop()));

    stackNodes = owners.map((owner, index) => ({
      burner: burners[index],
      owner: owner.address,
      licenseIds: [Number(licenseIds[index])],
      pid: processId(nodes[index]),
    }));
    return {
      solana,
      ledger,
      api: { url: api.url, workers: apiWorkers, logFile: apiLogFile, pid: api.pid },
      redis,
      apiKey,
      nodes,
      evmDemo,
      svmDemo,
      gameItem,
      l1HashRecorder,
      stack: {
        solana: { rpcUrl: solana.url },
        api: { baseUrl: api.url, apiKey, workers: apiWorkers },
        contracts: { l2: { GameItem: gameItem } },
        accounts: {
          consumer,
          tokenHolder,
          demoHolder: devAccount(NETWORK_ACCOUNTS.demoHolder),
          demoCollector: collector,
          ...Object.fromEntries(owners.map((owner, index) => [`nodeOwner${index + 1}`, owner])),
        },
        nodes: stackNodes,
        ...(challengerProcess === undefined || challenger === undefined
          ? {}
          : { challenger: { address: challenger.address, pid: challengerProcess.child.pid!, logFile: challengerProcess.logFile } }),
        demo: demoSection(evmDemo, svmDemo, conditions),
      },
      async restartNode(index: number) {
        // The supervisor stops the node as asked (no automatic restart follows) and starts it again; its `onRestart`
        // updates `nodes` and the stack.
        await supervisorOf(index).restart();
        return nodes[index];
      },
      async nodeRestarted(index: number) {
        await supervisorOf(index).restarted();
        return nodes[index];
      },
      nodeRestarts: (index: number) => supervisorOf(index).restarts,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** A node's process id: the node itself (`spawnScript` runs Node on its script, no shell in between). */
function processId(node: CircuitNodeProcess): number {
  const { pid } = node.child;
  if (pid === undefined) throw new Error(`the circuit node's process did not start; see ${node.logFile}`);
  return pid;
}

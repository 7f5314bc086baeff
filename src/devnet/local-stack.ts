import { rm } from "node:fs/promises";
import path from "node:path";

import { AvnError } from "@avn/protocol/errors";
import { network } from "hardhat";

import { deployL1, deployL1Intents, deployL2, DEVNET_IGNITION_CONFIG, type L1Deployment, type L2Deployment } from "../deploy/two-chain.ts";
import { Wallet } from "ethers";

import { devAccount } from "./accounts.ts";
import { deployClaimPlatform, startCreditsChannel, type CreditsChannel } from "./credits-setup.ts";
import { devnetGovernanceAddresses } from "../governance/network.ts";
import { placeUnderGovernance } from "./governance-setup.ts";
import { devnetProvider, startOpDevnet, type OpDevnet } from "./op-devnet.ts";
import type { ScriptProcess } from "./script-process.ts";
import {
  fundSolver,
  SOLVER_ACCOUNT,
  STACK_SOLVER_MIN_FEE_BPS,
  startStackSolver,
  superviseStackSolver,
  type StackSolver,
  type SupervisedStackSolver,
} from "./stack-solver.ts";
import { NETWORK_ACCOUNTS, startVerificationNetwork, type VerificationNetwork } from "./verification-network.ts";
import { WebhookReceiver, type ReceivedDelivery } from "./webhook-receiver.ts";
import { explorerUrlOf, removeStackFile, stackFilePath, writeStackFile, type StackFile } from "../common/stack-file.ts";
import { webConfigFromStack } from "../web/web-config.ts";
import { ensureWebBuild, webPaths } from "../web/web-build.ts";
import { startWebServer, type RunningWebServer } from "../web/web-server.ts";

/** The development account `deploy/parameters/devnetL1.json` names as the proposal guardian. */

/** API processes `npm start` runs (`api.workers` in the stack file): the hub's rounds cross between them. */
export const LOCAL_STACK_API_WORKERS = 2;
/**
 * The local stack's challenger bursts come a minute apart on average: a few challenge jobs a minute, so
 * each node's measured capacity shows within minutes (a live network's would be rarer: the fees are real).
 */
export const LOCAL_STACK_CHALLENGE_INTERVAL_SECONDS = 60;
export const DEVNET_GOVERNANCE_GUARDIAN = 6;

export interface LocalStackOptions {
  projectRoot: string;
  /**
   * Deploy the project's contracts (modules L1 and L2) with the devnet parameters, and pass governance's
   * first proposal, which hands the L2 contracts to the governance executor.
   */
  deployContracts: boolean;
  /**
   * Also run the verification network on it (needs `deployContracts`): demo holdings, licenses, three
   * circuit nodes, the API with a demo key.
   */
  runNetwork?: boolean;
  /** The API's port (default 8787, the `API_PORT` environment variable, or 0 for any free port). */
  apiPort?: number;
  /** API processes serving with the hub on (default `LOCAL_STACK_API_WORKERS`). */
  apiWorkers?: number;
  /** The API's key database (`API_KEYS_DB`, a `postgres://` URL); a SQLite file by default. */
  apiKeysDb?: string;
  /** The credits service's port, with the network (default 8789, `CREDITS_PORT`, 0 for any free port). */
  creditsPort?: number;
  /** Extra environment for the circuit nodes. */
  nodeEnv?: Record<string, string>;
  /**
   * Serve the web app (needs `deployContracts`) on this port (default 8788, the `WEB_PORT` environment
   * variable, 0 for any free port); building it first unless its build is current. Off when absent.
   */
  webPort?: number;
  onProgress?: (line: string) => void;
  onServiceError?: (service: string, error: unknown) => void;
  /** Each delivery the stack's demo webhook receiver gets (with the network). */
  onWebhook?: (delivery: ReceivedDelivery) => void;
}

export interface LocalStack {
  devnet: OpDevnet;
  network?: VerificationNetwork;
  credits?: CreditsChannel;
  web?: RunningWebServer;
  /**
   * The intent layer's solver (with the network), under a supervisor: `solver.process` is its current process, restarted
   * after a crash (the stack file's `solver.pid` follows).
   */
  solver?: SupervisedStackSolver;
  /**
   * Resolves with the solver's next process once its supervisor has restarted it after a crash and the stack file names
   * its `pid`; rejects if it is stopped first, or if the stack runs no solver.
   */
  solverRestarted(): Promise<ScriptProcess>;
  stack: StackFile;
  stackFile: string;
  /** Stops everything and removes the stack file. */
  stop(): Promise<void>;
}

/**
 * Starts the local OP devnet and, when asked, deploys the project's contracts on it through the same
 * Ignition modules and parameter files as a live deployment (`deploy/parameters/devnetL1.json`,
 * `devnetL2.json`); then writes `.devnet/stack.json` (`stack-file.ts`) with the parts it has. Every
 * start is a new pair of chains, so the previous devnet's deployment journals and relay cursor are
 * cleared first.
 */
export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  const progress = options.onProgress ?? (() => undefined);
  const stackFile = stackFilePath(options.projectRoot);
  let stackWritten = false;
  let stopping = false;
  const stateDir = path.join(options.projectRoot, ".devnet", "state");
  await removeStackFile(stackFile);
  await rm(stateDir, { recursive: true, force: true });
  for (const chainId of [900, 901]) {
    await rm(path.join(options.projectRoot, "deploy", "deployments", `chain-${chainId}`), { recursive: true, force: true });
  }

  const devnet = await startOpDevnet({ stateDir, onProgress: progress, onServiceError: options.onServiceError });
  let network: VerificationNetwork | undefined;
  let credits: CreditsChannel | undefined;
  let web: RunningWebServer | undefined;
  let solver: SupervisedStackSolver | undefined;
  let webhookReceiver: WebhookReceiver | undefined;
  // Rewrites of the stack file (a restarted process's new pid) one at a time, and none once stopping (the file is gone).
  let rewriting: Promise<void> = Promise.resolve();
  const rewriteStackFile = (stack: StackFile) => {
    rewriting = rewriting
      .catch(() => undefined)
      .then(async () => {
        if (stackWritten && !stopping) await writeStackFile(stackFile, stack);
      });
    return rewriting;
  };
  // The lines of the parts stop with the stack: Ctrl-C reaches its processes too, and their supervisors would report
  // their exits as unexpected.
  const progressUntilStopped = (line: string) => {
    if (!stopping) progress(line);
  };
  const stop = async () => {
    stopping = true;
    await rewriting.catch(() => undefined);
    await removeStackFile(stackFile);
    await webhookReceiver?.close();
    await web?.close();
    await solver?.stop();
    await credits?.service.close();
    await network?.stop();
    await devnet.stop();
  };
  try {
    const stack: StackFile = {
      l1: { chainId: devnet.l1.chainId, rpcUrl: devnet.l1.rpcUrl },
      l2: { chainId: devnet.l2.chainId, rpcUrl: devnet.l2.rpcUrl, wsUrl: devnet.l2.wsUrl },
      contracts: { l1: { ...devnet.l1Contracts }, l2: { ...devnet.l2Contracts } },
      accounts: { ...devnet.accounts },
    };
    if (options.deployContracts) {
      progress(
        "Deploying the contracts: module L1 (primary token, governor, timelock), module L2 (bridged token, staked token, licenses, registries, governance executor)…",
      );
      const deployed = await deployOnDevnet(devnet);
      Object.assign(stack.contracts!.l1!, deployed.l1);
      const { adminHandovers: _handedOver, ...l2 } = deployed.l2;
      Object.assign(stack.contracts!.l2!, l2);
      stack.accounts!.governanceGuardian = devAccount(DEVNET_GOVERNANCE_GUARDIAN);
      progress(
        options.runNetwork === true
          ? "Handing the L2 contracts to governance and naming the network's challenger: its first proposal, voted by the deployer's tokens on L1…"
          : "Handing the L2 contracts to governance: its first proposal, voted by the deployer's tokens on L1…",
      );
      await placeUnderGovernance({
        l1: devnet.l1,
        l2: devnet.l2,
        voter: devnet.accounts.deployer,
        addresses: devnetGovernanceAddresses(stack.contracts!),
        challenger: options.runNetwork === true ? devAccount(NETWORK_ACCOUNTS.challenger).address : undefined,
        onProgress: progress,
      });
      if (options.runNetwork === true) {
        // The credits channel's claim platform first: the example game lets it mint bought items.
        const issuer = Wallet.createRandom();
        const l2Provider = devnetProvider(devnet.l2.rpcUrl, devnet.l2.chainId);
        const voucherClaims = await deployClaimPlatform(l2Provider, devnet.accounts.deployer, issuer.address).finally(() =>
          l2Provider.destroy(),
        );
        network = await startVerificationNetwork({
          projectRoot: options.projectRoot,
          workDir: path.join(options.projectRoot, ".devnet", "network"),
          l1: devnet.l1,
          l2: devnet.l2,
          deployer: devnet.accounts.deployer,
          contracts: { l1PrimaryToken: deployed.l1PrimaryToken, l1StandardBridge: devnet.l1Contracts.L1StandardBridge, l2 },
          apiPort: options.apiPort ?? Number(process.env.API_PORT ?? 8787),
          // Two API processes with the hub on, as an operator who outgrew one would run it (docs/attestations.md).
          apiWorkers: options.apiWorkers ?? LOCAL_STACK_API_WORKERS,
          apiKeysDb: options.apiKeysDb,
          nodeEnv: options.nodeEnv,
          gameMinter: voucherClaims,
          challenger: { meanIntervalSeconds: LOCAL_STACK_CHALLENGE_INTERVAL_SECONDS },
          onProgress: progressUntilStopped,
          // A restarted node has a new process id: the file says so once it exists (it is written last, below).
          onNodeRestarted: () => rewriteStackFile(stack),
        });
        Object.assign(stack.contracts!.l2!, network.stack.contracts.l2, { VoucherClaims: voucherClaims });
        const l1Rpc = devnetProvider(devnet.l1.rpcUrl, devnet.l1.chainId);
        const l2Rpc = devnetProvider(devnet.l2.rpcUrl, devnet.l2.chainId);
        try {
          credits = await startCreditsChannel({
            workDir: path.join(options.projectRoot, ".devnet", "credits"),
            l1: l1Rpc,
            l2: l2Rpc,
            l2RpcUrl: devnet.l2.rpcUrl,
            deployer: devnet.accounts.deployer,
            contracts: {
              l1PrimaryToken: deployed.l1PrimaryToken,
              l1StandardBridge: devnet.l1Contracts.L1StandardBridge,
              l2: { ...l2, GameItem: network.gameItem, VoucherClaims: voucherClaims },
            },
            issuerKey: issuer.privateKey,
            port: options.creditsPort ?? Number(process.env.CREDITS_PORT ?? 8789),
            onProgress: progress,
          });
        } finally {
          l1Rpc.destroy();
          l2Rpc.destroy();
        }
        stack.credits = credits.stack;
        solver = await superviseStackSolver(await startLocalSolver(options.projectRoot, devnet, deployed, progress), {
          projectRoot: options.projectRoot,
          onProgress: progressUntilStopped,
          // Its new process id, in the file once it exists (it is written last, below).
          onRestarted: async (process) => {
            if (stack.solver !== undefined) stack.solver.pid = process.child.pid!;
            await rewriteStackFile(stack);
          },
        });
        stack.accounts!.solver = solver.account;
        stack.solver = {
          address: solver.account.address,
          pid: solver.process.child.pid!,
          logFile: solver.logFile,
          minFeeBps: STACK_SOLVER_MIN_FEE_BPS,
        };
        // A tiny receiver for the guide's subscription example (the API may deliver to loopback here).
        webhookReceiver = new WebhookReceiver({ onDelivery: options.onWebhook });
        stack.webhooks = { receiverUrl: await webhookReceiver.listen() };
        Object.assign(stack.accounts!, network.stack.accounts);
        Object.assign(stack, {
          solana: network.stack.solana,
          api: network.stack.api,
          nodes: network.stack.nodes,
          challenger: network.stack.challenger,
          demo: network.stack.demo,
        });
      }
      if (options.webPort !== undefined) {
        await ensureWebBuild(options.projectRoot, progress);
        web = await startWebServer({
          distDir: webPaths(options.projectRoot).distDir,
          config: webConfigFromStack(stack),
          port: options.webPort,
        });
        stack.web = { url: web.url, explorerUrl: explorerUrlOf(web.url) };
        progress(`Web app at ${web.url}, explorer at ${stack.web.explorerUrl}`);
      }
    }
    stackWritten = true;
    await rewriteStackFile(stack); // the first write, in line with the restarts' rewrites
    const supervisedSolver = solver;
    return {
      devnet,
      network,
      credits,
      web,
      solver,
      async solverRestarted() {
        if (supervisedSolver === undefined) throw new AvnError("NO_SOLVER", "the local stack runs no solver: it runs one with the network");
        await supervisedSolver.restarted();
        return supervisedSolver.process;
      },
      stack,
      stackFile,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Funds the stack's solver (its inventory on both chains) and starts it, in both directions (docs/intents.md). */
async function startLocalSolver(
  projectRoot: string,
  devnet: OpDevnet,
  deployed: { l1: L1Deployment; l2: L2Deployment },
  progress: (line: string) => void,
): Promise<StackSolver> {
  const { PrimaryToken: l1PrimaryToken, OriginSettler: l1OriginSettler } = deployed.l1;
  const account = devAccount(SOLVER_ACCOUNT);
  const logFile = path.join(projectRoot, ".devnet", "network", "logs", "solver.log");
  progress(
    `Starting the intent layer's solver: fast withdrawals L2 → L1 and fast deposits L1 → L2 paying out at most ${100 - STACK_SOLVER_MIN_FEE_BPS / 100}% of their input, from its inventory on both chains (log in ${path.relative(process.cwd(), logFile)})…`,
  );
  const l1 = devnetProvider(devnet.l1.rpcUrl, devnet.l1.chainId);
  try {
    await fundSolver({
      l1,
      bridgeNetwork: {
        name: "devnet",
        l1: { chainId: devnet.l1.chainId, rpcUrl: devnet.l1.rpcUrl },
        l2: { chainId: devnet.l2.chainId, rpcUrl: devnet.l2.rpcUrl },
        opContracts: devnet.l1Contracts,
        primaryToken: { l1: l1PrimaryToken, l2: deployed.l2.PrimaryToken },
        pollIntervalMs: 200,
      },
      deployer: devnet.accounts.deployer,
      solver: account.address,
      l1PrimaryToken,
    });
  } finally {
    l1.destroy();
  }
  return await startStackSolver({
    projectRoot,
    stateDir: path.join(projectRoot, ".devnet", "solver"),
    logFile,
    l1: devnet.l1,
    l2: devnet.l2,
    originSettler: deployed.l2.OriginSettler,
    l1OriginSettler,
    opContracts: devnet.l1Contracts,
    account,
  });
}

/**
 * Deploys modules L1 and L2 on a running devnet with its parameter files. `deploymentIds` name the
 * Ignition journals (default `chain-900` / `chain-901`, the devnet's own); tests and benchmarks pass
 * ids of their own so that a running `npm start` is never touched. `l2Parameters` are set over module L2's
 * parameter file (a test's network with a short epoch).
 */
export async function deployOnDevnet(
  devnet: { l1: { rpcUrl: string }; l2: { rpcUrl: string }; l1Contracts: { L1CrossDomainMessenger: string } },
  deploymentIds: { l1?: string; l2?: string } = {},
  l2Parameters: Record<string, string | bigint> = {},
): Promise<{ l1PrimaryToken: string; l1: L1Deployment; l2: L2Deployment }> {
  const l1Connection = await network.create({ network: "devnetL1", override: { url: devnet.l1.rpcUrl } });
  const l2Connection = await network.create({ network: "devnetL2", override: { url: devnet.l2.rpcUrl } });
  const common = { ignitionConfig: DEVNET_IGNITION_CONFIG };
  try {
    const l1 = await deployL1(l1Connection, { ...common, parametersNetwork: "devnetL1", deploymentId: deploymentIds.l1 });
    const l1ChainId = (await l1Connection.ethers.provider.getNetwork()).chainId;
    const links = { l1PrimaryToken: l1.PrimaryToken, l1Timelock: l1.Timelock, l1DestinationSettler: l1.DestinationSettler, l1ChainId };
    const l2 = await deployL2(l2Connection, links, {
      ...common,
      parametersNetwork: "devnetL2",
      deploymentId: deploymentIds.l2,
      parameterOverrides: l2Parameters,
    });
    // Fast deposits' L1 escrow names the L2's destination settler, so it comes last (module L1Intents).
    l1.OriginSettler = await deployL1Intents(
      l1Connection,
      {
        l1Messenger: devnet.l1Contracts.L1CrossDomainMessenger,
        l1PrimaryToken: l1.PrimaryToken,
        l2PrimaryToken: l2.PrimaryToken,
        l2DestinationSettler: l2.DestinationSettler,
        l2ChainId: (await l2Connection.ethers.provider.getNetwork()).chainId,
      },
      { ...common, parametersNetwork: "devnetL1", deploymentId: deploymentIds.l1 },
    );
    return { l1PrimaryToken: l1.PrimaryToken, l1, l2 };
  } finally {
    await l1Connection.close();
    await l2Connection.close();
  }
}

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

import type { BridgeNetwork } from "@avn/bridge";
import type { JsonRpcProvider } from "ethers";
import hre from "hardhat";

import { DEVNET_L1_BLOCK_SECONDS } from "../../src/common/stack-file.ts";
import type { L1Deployment, L2Deployment } from "../../src/deploy/two-chain.ts";
import { devnetTraceToFile } from "../../src/devnet/deploy-trace.ts";
import { deployOnDevnet } from "../../src/devnet/local-stack.ts";
import { startOpDevnet, type OpDevnet, type OpDevnetOptions } from "../../src/devnet/op-devnet.ts";

const projectRoot = path.resolve(import.meta.dirname, "..", "..");

export interface TestDevnet {
  devnet: OpDevnet;
  stateDir: string;
  /** The devnet as the bridge package sees it. */
  bridgeNetwork: BridgeNetwork;
  deployment?: { l1PrimaryToken: string; l1: L1Deployment; l2: L2Deployment };
  /** Failures of the devnet's relay and proposer: a test file checks it stays empty. */
  serviceErrors: string[];
  stop(): Promise<void>;
}

/**
 * A devnet of its own for a test file, in a temporary state directory; with `deploy`, modules L1 and L2
 * are deployed on it with the devnet parameter files under deployment ids of their own (so a running
 * `npm start` and its journals are never touched), and `l2Parameters` over module L2's parameter file.
 */
export async function startTestDevnet(
  options: Partial<OpDevnetOptions> & { deploy?: boolean; l2Parameters?: Record<string, string | bigint> } = {},
): Promise<TestDevnet> {
  const stateDir = await mkdtemp(path.join(tmpdir(), "devnet-test-"));
  // Under `hardhat test --coverage` the contracts deployed here are the instrumented ones, above the
  // 24 KiB limit that the devnet otherwise keeps like the live chains.
  const serviceErrors: string[] = [];
  // AVN_DEVNET_TRACE_DIR: each test devnet writes its chains' transaction trace there (src/devnet/deploy-trace.ts).
  const traceDir = process.env.AVN_DEVNET_TRACE_DIR;
  const traced = traceDir === undefined ? undefined : devnetTraceToFile(path.join(traceDir, `${path.basename(stateDir)}.log`));
  const devnet = await startOpDevnet({
    stateDir,
    trace: traced?.trace,
    disableCodeSizeLimit: hre.globalOptions.coverage,
    onServiceError: (service, error) => serviceErrors.push(`${service}: ${error instanceof Error ? error.message : String(error)}`),
    ...options,
  }).catch(async (error: unknown) => {
    await traced?.close(); // the trace file of a devnet that never started
    throw error;
  });
  const deploymentIds: string[] = [];
  const stop = async () => {
    await devnet.stop();
    await traced?.close();
    await rm(stateDir, { recursive: true, force: true });
    for (const id of deploymentIds) await rm(path.join(projectRoot, "deploy", "deployments", id), { recursive: true, force: true });
  };
  try {
    let deployment: TestDevnet["deployment"];
    if (options.deploy) {
      const suffix = path.basename(stateDir);
      deploymentIds.push(`test-l1-${suffix}`, `test-l2-${suffix}`);
      deployment = await deployOnDevnet(devnet, { l1: deploymentIds[0], l2: deploymentIds[1] }, options.l2Parameters);
    }
    const bridgeNetwork: BridgeNetwork = {
      name: "devnet",
      l1: { chainId: devnet.l1.chainId, rpcUrl: devnet.l1.rpcUrl },
      l2: { chainId: devnet.l2.chainId, rpcUrl: devnet.l2.rpcUrl },
      opContracts: devnet.l1Contracts,
      primaryToken: { l1: deployment?.l1PrimaryToken, l2: deployment?.l2.PrimaryToken },
      pollIntervalMs: 200,
    };
    return { devnet, stateDir, bridgeNetwork, deployment, serviceErrors, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

let shared: Promise<TestDevnet> | undefined;

/**
 * One devnet, with the contracts deployed, a finalization period that needs L1 time to be moved (an
 * hour) and L2 blocks every second (the live rollup's and `npm start`'s are 2 s: the flows checked here do
 * not depend on it, and each wait for an L2 block halves), shared by the test files of user flows (bridge,
 * wallet libraries, the web app) so that each does not start its own. Started by the first file that asks, stopped once after the whole run (a root `after` hook).
 * Files that use it leave state that others could trip on to accounts of their own.
 */
export function sharedTestDevnet(): Promise<TestDevnet> {
  shared ??= startTestDevnet({ deploy: true, finalizationPeriodSeconds: SHARED_FINALIZATION_PERIOD, l2BlockTime: SHARED_L2_BLOCK_TIME });
  return shared;
}

// Registered when the test files load (hooks outside any `describe` belong to mocha's root suite).
after(async function () {
  if (shared === undefined) return;
  this.timeout(60_000);
  const net = await shared;
  const errors = net.serviceErrors;
  await net.stop();
  if (errors.length > 0) throw new Error(`the shared devnet's relay or proposer failed: ${errors.join("; ")}`);
});

/** The shared devnet's L2 block time, in seconds. */
export const SHARED_L2_BLOCK_TIME = 1;

/** The shared devnet's finalization period: long enough that finalizing needs L1 time to be moved. */
export const SHARED_FINALIZATION_PERIOD = 3_600n;

/** Moves L1 time forward by `seconds` and mines a block there. */
export async function advanceL1Time(devnet: OpDevnet, seconds: bigint): Promise<void> {
  await devnet.l1Provider.send("evm_increaseTime", [Number(seconds)]);
  await devnet.l1Provider.send("evm_mine", []);
}

/** Polls `read` until `accept` holds for its value, or fails after `timeoutMs`. */
export async function eventually<T>(read: () => Promise<T>, accept: (value: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (accept(value)) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms (last value: ${String(value)})`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Runs `checks` with the L1 standing still: no block of its own (interval mining and automine paused), so
 * that what a test reads right after a transaction does not race the L1's clock and the transactions of
 * the devnet's own services. `checks` gets `mineWhenSent(from, send)`: runs `send` and mines one block as
 * soon as `from` has a transaction waiting (what `send` submits lands alone in it, or with the services'
 * waiting ones). Mining resumes after, whatever happens.
 */
export async function withL1StandingStill<T>(
  l1: JsonRpcProvider,
  checks: (mineWhenSent: <R>(from: string, send: () => Promise<R>) => Promise<R>) => Promise<T>,
): Promise<T> {
  await l1.send("evm_setIntervalMining", [0]);
  await l1.send("evm_setAutomine", [false]);
  const mineWhenSent = async <R>(from: string, send: () => Promise<R>): Promise<R> => {
    const mined = await l1.getTransactionCount(from, "latest");
    const sent = send();
    let settled = false;
    void sent.finally(() => (settled = true)).catch(() => undefined);
    while (!settled && (await l1.getTransactionCount(from, "pending")) === mined) await new Promise((resolve) => setTimeout(resolve, 50));
    if (!settled) await l1.send("evm_mine", []);
    return sent;
  };
  try {
    return await checks(mineWhenSent);
  } finally {
    await l1.send("evm_setAutomine", [true]);
    await l1.send("evm_setIntervalMining", [DEVNET_L1_BLOCK_SECONDS]);
  }
}

/**
 * Sends several L1 transactions into one L1 block: mining is paused (the devnet's L1 otherwise mines
 * each transaction at once), `send` submits them, one block is mined, and mining resumes.
 */
export async function inOneL1Block<T>(devnet: OpDevnet, send: () => Promise<T>): Promise<T> {
  const l1 = devnet.l1Provider;
  await l1.send("evm_setIntervalMining", [0]);
  await l1.send("evm_setAutomine", [false]);
  try {
    const sent = await send();
    await l1.send("evm_mine", []);
    return sent;
  } finally {
    await l1.send("evm_setAutomine", [true]);
    await l1.send("evm_setIntervalMining", [2]);
  }
}

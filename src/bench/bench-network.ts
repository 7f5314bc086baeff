import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

import type { JsonRpcProvider } from "ethers";

import { deployOnDevnet } from "../devnet/local-stack.ts";
import { devnetProvider, startOpDevnet } from "../devnet/op-devnet.ts";
import { startVerificationNetwork, type VerificationNetwork } from "../devnet/verification-network.ts";

export interface BenchNetwork {
  /** An L2 provider (destroyed when the bench ends). */
  l2: JsonRpcProvider;
  /** The L2 contracts of the deployment. */
  contracts: VerificationNetworkContracts;
  network: VerificationNetwork;
}

type VerificationNetworkContracts = Parameters<typeof startVerificationNetwork>[0]["contracts"]["l2"];

/**
 * Runs `bench` on a fresh devnet with the verification network of `npm start` (contracts deployed, three
 * circuit nodes, the API and its hub), then stops everything and removes the devnet's state and the
 * deployment journals it wrote, whatever `bench` did.
 */
export async function withBenchNetwork<T>(
  options: { name: string; projectRoot: string; apiEnv?: Record<string, string>; onProgress: (line: string) => void },
  bench: (context: BenchNetwork) => Promise<T>,
): Promise<T> {
  const stateDir = await mkdtemp(path.join(tmpdir(), `bench-${options.name}-`));
  const devnet = await startOpDevnet({ stateDir });
  const suffix = path.basename(stateDir);
  const ids = { l1: `bench-l1-${suffix}`, l2: `bench-l2-${suffix}` };
  const l2 = devnetProvider(devnet.l2.rpcUrl, devnet.l2.chainId);
  let network: VerificationNetwork | undefined;
  try {
    const deployment = await deployOnDevnet(devnet, ids);
    const { adminHandovers: _none, ...contracts } = deployment.l2;
    network = await startVerificationNetwork({
      projectRoot: options.projectRoot,
      workDir: path.join(stateDir, "network"),
      l1: devnet.l1,
      l2: devnet.l2,
      deployer: devnet.accounts.deployer,
      contracts: { l1PrimaryToken: deployment.l1PrimaryToken, l1StandardBridge: devnet.l1Contracts.L1StandardBridge, l2: contracts },
      apiPort: 0,
      apiEnv: options.apiEnv,
      onProgress: options.onProgress,
    });
    return await bench({ l2, contracts, network });
  } finally {
    l2.destroy();
    await network?.stop();
    await devnet.stop();
    await rm(stateDir, { recursive: true, force: true });
    for (const id of Object.values(ids))
      await rm(path.join(options.projectRoot, "deploy", "deployments", id), { recursive: true, force: true });
  }
}

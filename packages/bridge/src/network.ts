import { readFile } from "node:fs/promises";
import path from "node:path";

import { ethers } from "ethers";

import { BridgeError } from "./errors.ts";

/** The OP contracts on L1 the SDK needs, by contract name. */
export interface OpL1Addresses {
  AddressManager: string;
  L1CrossDomainMessenger: string;
  L1StandardBridge: string;
  OptimismPortal: string;
  L2OutputOracle: string;
  /** Only for chains with fault proofs (OptimismPortal 3.x): where their dispute games are. */
  DisputeGameFactory?: string;
}

/** Everything the bridge needs to know about one L1/L2 pair. No keys: those come separately. */
export interface BridgeNetwork {
  name: string;
  l1: { chainId: number; rpcUrl: string };
  l2: { chainId: number; rpcUrl: string };
  opContracts: OpL1Addresses;
  /** The primary token on each side, when deployed. */
  primaryToken: { l1?: string; l2?: string };
  /** How often to poll the chains while waiting. */
  pollIntervalMs: number;
}

const OP_CONTRACT_NAMES = ["AddressManager", "L1CrossDomainMessenger", "L1StandardBridge", "OptimismPortal", "L2OutputOracle"] as const;

/** What this package reads of the local stack file (`.devnet/stack.json`). */
interface StackFileView {
  l1?: { chainId: number; rpcUrl: string };
  l2?: { chainId: number; rpcUrl: string };
  contracts?: { l1?: Record<string, string | undefined>; l2?: Record<string, string | undefined> };
}

/** A JSON file, typed as the caller expects it; the caller checks what it relies on. */
async function readJson<T>(file: string, missing: string): Promise<T> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") throw new BridgeError("CONFIGURATION", missing);
    throw error;
  }
  try {
    return JSON.parse(text) as T;
  } catch (error) {
    throw new BridgeError("CONFIGURATION", `${file} is not valid JSON`, { cause: error });
  }
}

function pickOpContracts(source: Record<string, unknown> | undefined, where: string): OpL1Addresses {
  const picked = {} as OpL1Addresses;
  for (const name of OP_CONTRACT_NAMES) {
    const address = source?.[name];
    if (typeof address !== "string" || !ethers.utils.isAddress(address) || BigInt(address) === 0n) {
      throw new BridgeError("CONFIGURATION", `${where} has no address for ${name}`);
    }
    picked[name] = address;
  }
  const factory = source?.DisputeGameFactory;
  if (factory !== undefined) {
    if (typeof factory !== "string" || !ethers.utils.isAddress(factory)) {
      throw new BridgeError("CONFIGURATION", `${where} has an invalid address for DisputeGameFactory`);
    }
    picked.DisputeGameFactory = factory;
  }
  return picked;
}

/** The running local devnet, from its stack file (`.devnet/stack.json`, written by `npm run devnet` / `npm start`). */
export async function devnetNetwork(stackFile: string): Promise<BridgeNetwork> {
  const stack = await readJson<StackFileView>(
    stackFile,
    `No local devnet is running (${path.basename(stackFile)} not found): start one with \`npm run devnet\` or \`npm start\``,
  );
  if (stack.l1 === undefined || stack.l2 === undefined) {
    throw new BridgeError("CONFIGURATION", "The local stack has no L1/L2 pair: start it with `npm run devnet` or `npm start`");
  }
  return {
    name: "devnet",
    l1: { chainId: stack.l1.chainId, rpcUrl: stack.l1.rpcUrl },
    l2: { chainId: stack.l2.chainId, rpcUrl: stack.l2.rpcUrl },
    opContracts: pickOpContracts(stack.contracts?.l1, "The stack file"),
    primaryToken: { l1: stack.contracts?.l1?.PrimaryToken, l2: stack.contracts?.l2?.PrimaryToken },
    pollIntervalMs: 250,
  };
}

export interface LiveNetworkSources {
  /** The project root: deployment records live under `deploy/`. */
  projectRoot: string;
  env: NodeJS.ProcessEnv;
}

const LIVE_L1_CHAIN_ID = 11155111;
const LIVE_L2_CHAIN_ID = 123420000418;

/**
 * The live test networks. RPC URLs come from `L1_TESTNET_RPC_URL` and `L2_TESTNET_RPC_URL` (the names
 * the Hardhat config uses); the OP chain's L1 contract addresses from `deploy/op-chains/l2Testnet.json`
 * (or the file named by `OP_CHAIN_CONFIG`); the primary token addresses from the Ignition deployment
 * records in `deploy/deployments/chain-<id>/deployed_addresses.json`.
 */
export async function testnetNetwork({ projectRoot, env }: LiveNetworkSources): Promise<BridgeNetwork> {
  const rpcUrl = (name: string) => {
    const value = env[name];
    if (value === undefined || value === "") throw new BridgeError("CONFIGURATION", `Set ${name} to the network's JSON-RPC URL`);
    return value;
  };
  const opChainFile = env.OP_CHAIN_CONFIG ?? path.join(projectRoot, "deploy", "op-chains", "l2Testnet.json");
  const opChain = await readJson<{ contracts?: Record<string, unknown> }>(
    opChainFile,
    `The OP chain's L1 contract addresses are not configured: write them to ${path.relative(projectRoot, opChainFile)} ` +
      "(format: deploy/op-chains/example.json) or point OP_CHAIN_CONFIG at such a file",
  );
  const opContracts = pickOpContracts(opChain.contracts, path.relative(projectRoot, opChainFile));
  const records = async (chainId: number) => {
    const file = path.join(projectRoot, "deploy", "deployments", `chain-${chainId}`, "deployed_addresses.json");
    try {
      return await readJson<Record<string, string | undefined>>(file, "");
    } catch {
      return {}; // not deployed yet: only the ETH commands work
    }
  };
  return {
    name: "testnet",
    l1: { chainId: LIVE_L1_CHAIN_ID, rpcUrl: rpcUrl("L1_TESTNET_RPC_URL") },
    l2: { chainId: LIVE_L2_CHAIN_ID, rpcUrl: rpcUrl("L2_TESTNET_RPC_URL") },
    opContracts,
    primaryToken: {
      l1: (await records(LIVE_L1_CHAIN_ID))["L1#PrimaryToken"],
      l2: (await records(LIVE_L2_CHAIN_ID))["L2#L2PrimaryToken"],
    },
    pollIntervalMs: 4_000,
  };
}

import { readFile } from "node:fs/promises";
import path from "node:path";

import { isAddress } from "ethers";

import { DEVNET_L1_BLOCK_SECONDS, readStackFile, stackFilePath, type StackFile } from "../common/stack-file.ts";
import { L2_PREDEPLOYS } from "@avn/protocol/op-predeploys";
import { GovernanceError } from "./errors.ts";
import type { GovernanceAddresses } from "./status.ts";

/** One L1/L2 pair's governance: where it lives and how to reach it. No keys: those come separately. */
export interface GovernanceNetwork {
  name: string;
  l1: { chainId: number; rpcUrl: string };
  l2: { chainId: number; rpcUrl: string };
  addresses: GovernanceAddresses;
  l1BlockSeconds: number;
  /** Development accounts by name (the devnet only). */
  accounts: Record<string, { address: string; privateKey: string }>;
}

const TESTNET = { l1ChainId: 11155111, l2ChainId: 123420000418, l1BlockSeconds: 12 };

/** Governance's addresses on a devnet, from what the stack file (or a deployment) names. */
export function devnetGovernanceAddresses(contracts: NonNullable<StackFile["contracts"]>): GovernanceAddresses {
  const need = (part: Record<string, string> | undefined, name: string, chain: string) => {
    const address = part?.[name];
    if (address === undefined)
      throw new GovernanceError("CONFIGURATION", `The stack names no ${chain} ${name}: deploy the contracts first (npm start)`);
    return address as `0x${string}`;
  };
  return {
    governor: need(contracts.l1, "Governor", "L1"),
    timelock: need(contracts.l1, "Timelock", "L1"),
    token: need(contracts.l1, "PrimaryToken", "L1"),
    l1Messenger: need(contracts.l1, "L1CrossDomainMessenger", "L1"),
    executor: need(contracts.l2, "GovernanceExecutor", "L2"),
    l2Messenger: L2_PREDEPLOYS.L2CrossDomainMessenger,
    l2: {
      StakedToken: need(contracts.l2, "StakedToken", "L2"),
      NodeLicense: need(contracts.l2, "NodeLicense", "L2"),
      NodeRegistry: need(contracts.l2, "NodeRegistry", "L2"),
      VerificationRegistry: need(contracts.l2, "VerificationRegistry", "L2"),
      RewardPools: need(contracts.l2, "RewardPools", "L2"),
    },
  };
}

/** The running local stack, from its stack file. */
export async function devnetGovernanceNetwork(projectRoot: string): Promise<GovernanceNetwork> {
  const stack = await readStackFile(stackFilePath(projectRoot)).catch(() => {
    throw new GovernanceError("CONFIGURATION", "No local stack is running (.devnet/stack.json not found): start one with `npm start`");
  });
  if (stack.l1 === undefined || stack.l2 === undefined || stack.contracts === undefined) {
    throw new GovernanceError("CONFIGURATION", "The local stack has no contracts deployed: start it with `npm start`");
  }
  return {
    name: "devnet",
    l1: stack.l1,
    l2: stack.l2,
    addresses: devnetGovernanceAddresses(stack.contracts),
    l1BlockSeconds: DEVNET_L1_BLOCK_SECONDS,
    accounts: stack.accounts ?? {},
  };
}

/**
 * The live test networks: RPC URLs from the environment (`L1_TESTNET_RPC_URL`, `L2_TESTNET_RPC_URL`),
 * addresses from the committed Ignition records (`deploy/deployments/chain-<id>/`) and the OP chain's L1
 * messenger from `deploy/op-chains/l2Testnet.json`.
 */
export async function testnetGovernanceNetwork(projectRoot: string, env: NodeJS.ProcessEnv): Promise<GovernanceNetwork> {
  const url = (name: string) => {
    const value = env[name];
    if (value === undefined || value === "") throw new GovernanceError("CONFIGURATION", `Set ${name} to reach the test network`);
    return value;
  };
  const records = async (chainId: number) =>
    readJson(path.join(projectRoot, "deploy", "deployments", `chain-${chainId}`, "deployed_addresses.json"));
  const l1 = await records(TESTNET.l1ChainId);
  const l2 = await records(TESTNET.l2ChainId);
  const opChain = await readJson(path.join(projectRoot, "deploy", "op-chains", "l2Testnet.json"));
  const pick = (source: Record<string, unknown>, key: string, where: string) => {
    const value = source[key];
    if (typeof value !== "string" || !isAddress(value) || BigInt(value) === 0n)
      throw new GovernanceError("CONFIGURATION", `${where} names no address for ${key}`);
    return value as `0x${string}`;
  };
  const l1Where = `deploy/deployments/chain-${TESTNET.l1ChainId}`;
  const l2Where = `deploy/deployments/chain-${TESTNET.l2ChainId}`;
  return {
    name: "testnet",
    l1: { chainId: TESTNET.l1ChainId, rpcUrl: url("L1_TESTNET_RPC_URL") },
    l2: { chainId: TESTNET.l2ChainId, rpcUrl: url("L2_TESTNET_RPC_URL") },
    addresses: {
      governor: pick(l1, "L1#ProtocolGovernor", l1Where),
      timelock: pick(l1, "L1#ProtocolTimelock", l1Where),
      token: pick(l1, "L1#PrimaryToken", l1Where),
      l1Messenger: pick((opChain.contracts ?? {}) as Record<string, unknown>, "L1CrossDomainMessenger", "deploy/op-chains/l2Testnet.json"),
      executor: pick(l2, "L2#GovernanceExecutor", l2Where),
      l2Messenger: L2_PREDEPLOYS.L2CrossDomainMessenger,
      l2: {
        StakedToken: pick(l2, "L2#StakedToken", l2Where),
        NodeLicense: pick(l2, "L2#NodeLicense", l2Where),
        NodeRegistry: pick(l2, "L2#NodeRegistry", l2Where),
        VerificationRegistry: pick(l2, "L2#VerificationRegistry", l2Where),
        RewardPools: pick(l2, "L2#RewardPools", l2Where),
      },
    },
    l1BlockSeconds: TESTNET.l1BlockSeconds,
    accounts: {},
  };
}

async function readJson(file: string): Promise<Record<string, unknown>> {
  try {
    return JSON.parse(await readFile(file, "utf8")) as Record<string, unknown>;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT")
      throw new GovernanceError("CONFIGURATION", `${path.basename(path.dirname(file))}/${path.basename(file)} not found: deploy first`);
    throw new GovernanceError("CONFIGURATION", `${path.basename(file)} is not valid JSON`);
  }
}

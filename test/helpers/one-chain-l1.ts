import { Interface, type JsonRpcProvider, type Signer, ZeroHash } from "ethers";
import { network } from "hardhat";

import { opArtifact } from "../../src/op/artifacts.ts";
import { L2_PREDEPLOYS } from "@avn/protocol/op-predeploys";

/** The OP depositor account, the only sender `L1Block.setL1BlockValues` accepts. */
const DEPOSITOR = "0xDeaDDEaDDeAdDeAdDEAdDEaddeAddEAdDEAd0001";
const l1Block = new Interface(opArtifact("L1Block").abi);

/**
 * A fresh in-process chain that plays both L1 and L2 (its own blocks are the "L1" the L2's `L1Block` names), with
 * Bedrock's real `L1Block` at its predeploy address and the depositor that sets it impersonated. In-process, so that
 * the contracts' lines count in the coverage gate (which instruments Hardhat's network, not anvil).
 */
export async function oneChainAsL1AndL2(): Promise<{ provider: JsonRpcProvider; signers: Signer[] }> {
  const { ethers } = await network.create();
  const provider = ethers.provider as unknown as JsonRpcProvider;
  await provider.send("hardhat_setCode", [L2_PREDEPLOYS.L1Block, opArtifact("L1Block").deployedBytecode]);
  await provider.send("hardhat_impersonateAccount", [DEPOSITOR]);
  await provider.send("hardhat_setBalance", [DEPOSITOR, "0x56bc75e2d63100000"]);
  return { provider, signers: (await ethers.getSigners()) as unknown as Signer[] };
}

/** Makes `L1Block` report L1 block `number` with `timestamp` and `hash`, as the depositor does on an OP chain (mining a block). */
export async function reportL1Block(provider: JsonRpcProvider, number: bigint, timestamp: number, hash: string): Promise<void> {
  const data = l1Block.encodeFunctionData("setL1BlockValues", [number, timestamp, 0n, hash, 0n, ZeroHash, 0n, 0n]);
  const txHash = (await provider.send("eth_sendTransaction", [{ from: DEPOSITOR, to: L2_PREDEPLOYS.L1Block, data }])) as string;
  await provider.waitForTransaction(txHash);
}

/** Makes `L1Block` report block `number` of this same chain (or the `hash` given instead of its own). */
export async function reportOwnBlock(provider: JsonRpcProvider, number: bigint, hash?: string): Promise<void> {
  const block = (await provider.getBlock(number))!;
  await reportL1Block(provider, number, block.timestamp, hash ?? block.hash!);
}

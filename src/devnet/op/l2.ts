import { Contract, type JsonRpcProvider, type Signer } from "ethers";

import { opArtifact, opPreinstallCode, permit2Code } from "../../op/artifacts.ts";
import { installEasPredeploys } from "../../op/eas-predeploys.ts";
import { PERMIT2_ADDRESS } from "@avn/protocol/intents";
import { L2_PREDEPLOYS } from "@avn/protocol/op-predeploys";
import { MULTICALL3_ADDRESS } from "@avn/protocol/constants";
import type { OpL1Contracts } from "./l1.ts";

/** Puts Multicall3's runtime code at its canonical address on an anvil chain. */
export async function installMulticall3(provider: JsonRpcProvider): Promise<void> {
  await provider.send("anvil_setCode", [MULTICALL3_ADDRESS, opPreinstallCode("MultiCall3")]);
}

/**
 * Puts Permit2 at its canonical address on an anvil chain: as the OP stack preinstalls it on the L2, and as it is
 * deployed on Ethereum and its test networks (the intent layer's `openFor`, in both directions).
 */
export async function installPermit2(provider: JsonRpcProvider, chainId: bigint): Promise<void> {
  await provider.send("anvil_setCode", [PERMIT2_ADDRESS, permit2Code(chainId)]);
}

/**
 * Installs the OP predeploys on an anvil L2 and initializes them against the L1 contracts. The 0.17.3
 * predeploys have no immutables, so their runtime code works at any address; storage there starts empty,
 * so each can be initialized once (their constructors only locked the implementation's own storage).
 * A real genesis puts a proxy at each address instead; the behaviour seen by bridges and the SDK is the
 * same. L1Block, L2ToL1MessagePasser and GasPriceOracle need no initialization: an empty L1Block reports
 * ETH as the gas-paying token, which the bridges ask for (the L1 attributes updater, `l1-attributes.ts`,
 * later sets its L1 block values and leaves the token alone), and an L1 data fee of 0, which the oracle
 * passes on to wallets. EAS and its SchemaRegistry, which the OP stack predeploys too, come from the EAS team's
 * own build (`installEasPredeploys`).
 */
export async function installL2Predeploys(provider: JsonRpcProvider, signer: Signer, l1: OpL1Contracts): Promise<void> {
  for (const [name, address] of Object.entries(L2_PREDEPLOYS)) {
    await provider.send("anvil_setCode", [address, opArtifact(name).deployedBytecode]);
  }
  const initializations: Array<[keyof typeof L2_PREDEPLOYS, unknown[]]> = [
    ["L2CrossDomainMessenger", [l1.L1CrossDomainMessenger]],
    ["L2StandardBridge", [l1.L1StandardBridge]],
    ["OptimismMintableERC20Factory", [L2_PREDEPLOYS.L2StandardBridge]],
    ["L2ERC721Bridge", [l1.L1ERC721Bridge]],
  ];
  for (const [name, args] of initializations) {
    const predeploy = new Contract(L2_PREDEPLOYS[name], opArtifact(name).abi, signer);
    await (await predeploy.getFunction("initialize").send(...args)).wait();
  }
  await installEasPredeploys(provider, "anvil");
}

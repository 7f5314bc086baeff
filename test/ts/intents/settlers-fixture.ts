import { type BaseContract, Contract, ContractFactory, type ErrorDescription, type JsonRpcProvider, type Signer } from "ethers";
import hre from "hardhat";

import { buildStorageProof } from "../../../src/chains/evm/balance-proof.ts";
import { opArtifact, permit2Code } from "../../../src/op/artifacts.ts";
import { fillSlotOf, PERMIT2_ADDRESS } from "@avn/protocol/intents";
import { oneChainAsL1AndL2, reportOwnBlock } from "../../helpers/one-chain-l1.ts";
import { L2_PREDEPLOYS } from "@avn/protocol/op-predeploys";

export const SETTLEMENT_WINDOW = 600n;
export const MAX_PROOF_AGE = 86_400n;

export interface SettlersFixture {
  provider: JsonRpcProvider;
  signers: Signer[];
  chainId: bigint;
  inputToken: Contract;
  outputToken: Contract;
  origin: Contract;
  destination: Contract;
  verifier: Contract;
  l1Block: Contract;
  deploy(name: string, args: unknown[]): Promise<Contract>;
  /** Makes `L1Block` report block `number` of this chain (or the `hash` given). */
  setL1Block(number: bigint, hash?: string): Promise<void>;
  /** A proof of order `orderId`'s fill record in `settler` at the latest block, which `L1Block` is then made to report. */
  fillProof(orderId: string, settler?: string): Promise<string>;
}

/**
 * One in-process chain playing both sides (its own blocks are the "L1" the L2's `L1Block` names, and the destination
 * chain id is its own), with Bedrock's `L1Block` and the OP-stack Permit2 preinstall at their addresses. In-process, so
 * that the settlers' lines count in the coverage gate.
 */
export async function settlersFixture(): Promise<SettlersFixture> {
  const { provider, signers } = await oneChainAsL1AndL2();
  const chainId = (await provider.getNetwork()).chainId;
  await provider.send("hardhat_setCode", [PERMIT2_ADDRESS, permit2Code(chainId)]);
  const deployer = signers[0];
  const deploy = async (name: string, args: unknown[]) => {
    const artifact = await hre.artifacts.readArtifact(name);
    const contract = await new ContractFactory(artifact.abi, artifact.bytecode, deployer).deploy(...args);
    await contract.waitForDeployment();
    return contract as Contract;
  };
  const supply = 10n ** 30n;
  const inputToken = await deploy("PlainERC20", [await deployer.getAddress(), supply]);
  const outputToken = await deploy("PlainERC20", [await deployer.getAddress(), supply]);
  const hashes = await deploy("L1BlockHashes", [L2_PREDEPLOYS.L1Block]);
  const verifier = await deploy("StorageProofVerifier", [await hashes.getAddress(), L2_PREDEPLOYS.L1Block]);
  const destination = await deploy("DestinationSettler", []);
  const origin = await deploy("OriginSettler", [
    {
      verifier: await verifier.getAddress(),
      destinationSettler: await destination.getAddress(),
      destinationChainId: chainId,
      inputToken: await inputToken.getAddress(),
      outputToken: await outputToken.getAddress(),
      permit2: PERMIT2_ADDRESS,
      settlementWindow: SETTLEMENT_WINDOW,
      maxProofAge: MAX_PROOF_AGE,
    },
  ]);
  const l1Block = new Contract(L2_PREDEPLOYS.L1Block, opArtifact("L1Block").abi, provider);
  const setL1Block = (number: bigint, hash?: string) => reportOwnBlock(provider, number, hash);
  const rpc = { request: <T>(method: string, params: unknown[]) => provider.send(method, params) as Promise<T> };
  const fillProof = async (orderId: string, settler?: string) => {
    const blockNumber = BigInt(await provider.getBlockNumber());
    await setL1Block(blockNumber);
    const account = settler ?? (await destination.getAddress());
    const { encoded } = await buildStorageProof(rpc, { account, slots: [fillSlotOf(orderId as `0x${string}`)], blockNumber });
    return encoded;
  };
  return { provider, signers, chainId, inputToken, outputToken, origin, destination, verifier, l1Block, deploy, setL1Block, fillProof };
}

/** The custom error a call or transaction reverted with, decoded with `contract`'s ABI. */
export async function revertOf(call: Promise<unknown>, ...contracts: Array<Pick<BaseContract, "interface">>): Promise<ErrorDescription> {
  try {
    await call;
  } catch (error) {
    const data = (error as { data?: string }).data;
    for (const contract of contracts) {
      const parsed = data === undefined ? null : contract.interface.parseError(data);
      if (parsed !== null) return parsed;
    }
    throw error;
  }
  throw new Error("the call did not revert");
}

import { AbiCoder, Contract, keccak256, toQuantity, ZeroHash, type JsonRpcProvider, type Signer } from "ethers";

import { opArtifact } from "../../op/artifacts.ts";
import { L2_PREDEPLOYS } from "@avn/protocol/op-predeploys";
import { BackgroundService, type BackgroundServiceOptions } from "./background-service.ts";

export interface OutputProposerOptions extends BackgroundServiceOptions {
  /** The proposer account on L1 (the oracle's `proposer`). */
  l1Signer: Signer;
  l2: JsonRpcProvider;
  /** The L2OutputOracle proxy on L1. */
  oracle: string;
}

/**
 * The output root of an L2 block (OP spec, version 0):
 * `keccak256(abi.encode(bytes32(0), stateRoot, messagePasserStorageRoot, blockHash))`, with the
 * storage root of L2ToL1MessagePasser read by `eth_getProof` at that block: exactly what the OP SDK
 * rebuilds when it proves a withdrawal.
 */
export async function computeOutputRoot(l2: JsonRpcProvider, blockNumber: bigint): Promise<string> {
  const tag = toQuantity(blockNumber);
  const [block, proof] = await Promise.all([
    l2.send("eth_getBlockByNumber", [tag, false]) as Promise<{ stateRoot: string; hash: string } | null>,
    l2.send("eth_getProof", [L2_PREDEPLOYS.L2ToL1MessagePasser, [], tag]) as Promise<{ storageHash: string }>,
  ]);
  if (block === null) throw new Error(`L2 block ${blockNumber} does not exist`);
  return keccak256(
    AbiCoder.defaultAbiCoder().encode(
      ["bytes32", "bytes32", "bytes32", "bytes32"],
      [ZeroHash, block.stateRoot, proof.storageHash, block.hash],
    ),
  );
}

/**
 * The devnet's stand-in for op-proposer: posts the output root of every `submissionInterval`-th L2
 * block to L2OutputOracle as soon as the oracle accepts it (the block exists and its nominal timestamp
 * is in L1's past), so that withdrawals become provable within seconds.
 */
export class OutputProposer extends BackgroundService<number> {
  readonly #options: OutputProposerOptions;
  readonly #oracle: Contract;
  #proposed = 0;

  constructor(options: OutputProposerOptions) {
    super(options);
    this.#options = options;
    this.#oracle = new Contract(options.oracle, opArtifact("L2OutputOracle").abi, options.l1Signer);
  }

  get proposedCount(): number {
    return this.#proposed;
  }

  /** Proposes every output the oracle accepts now and returns how many; joins a pass already running. */
  proposePending(): Promise<number> {
    return this.runPass();
  }

  protected async pass(isStopping: () => boolean): Promise<number> {
    const { l2 } = this.#options;
    const l1 = this.#options.l1Signer.provider;
    if (l1 === null) throw new Error("the proposer's L1 signer has no provider");
    let proposed = 0;
    while (!isStopping()) {
      const next = (await this.#oracle.getFunction("nextBlockNumber").staticCall()) as bigint;
      if (next > BigInt(await l2.getBlockNumber())) break;
      const nominalTimestamp = (await this.#oracle.getFunction("computeL2Timestamp").staticCall(next)) as bigint;
      const l1Head = await l1.getBlock("latest");
      // The oracle refuses outputs whose nominal time is not yet past on L1.
      if (l1Head === null || nominalTimestamp >= BigInt(l1Head.timestamp)) break;
      const root = await computeOutputRoot(l2, next);
      await (await this.#oracle.getFunction("proposeL2Output").send(root, next, ZeroHash, 0n)).wait();
      this.#proposed += 1;
      proposed += 1;
    }
    return proposed;
  }
}

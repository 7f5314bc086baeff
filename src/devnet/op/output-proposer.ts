import { AbiCoder, Contract, keccak256, toQuantity, ZeroHash, type JsonRpcProvider, type Signer, type TransactionResponse } from "ethers";

import { opArtifact } from "../../op/artifacts.ts";
import { L2_PREDEPLOYS } from "@avn/protocol/op-predeploys";
import { BackgroundService, type BackgroundServiceOptions } from "./background-service.ts";
import { receiptUnlessDropped } from "./receipt-unless-dropped.ts";

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

/** Outputs proposed in one go at most: a pass that finds more due proposes the rest in the next round. */
const MAX_OUTPUTS_PER_ROUND = 64;

/** The oracle's fixed parameters, read once: what its `nextBlockNumber` and `computeL2Timestamp` compute from. */
interface OracleSchedule {
  submissionInterval: bigint;
  l2BlockTime: bigint;
  startingBlockNumber: bigint;
  startingTimestamp: bigint;
}

/**
 * The devnet's stand-in for op-proposer: posts the output root of every `submissionInterval`-th L2
 * block to L2OutputOracle as soon as the oracle accepts it (the block exists and its nominal timestamp
 * is in L1's past), so that withdrawals become provable within seconds.
 *
 * It must keep up with the L2 (one output per block with an interval of 1, every second on the shared test
 * devnet) however loaded the machine is. Proposing one output at a time, each with its reads, its estimate
 * and its receipt, took about 2 s per output on a busy two-core machine: the oracle fell a minute and more
 * behind, and a withdrawal waited that long to be provable. So each round reads the oracle's next block and
 * the two heads once, works out which outputs are due from the oracle's fixed schedule, computes their roots
 * together, and sends their transactions back to back (consecutive nonces, the gas limit of the first's
 * estimate, one fee reading), waiting only for the last receipt.
 */
export class OutputProposer extends BackgroundService<number> {
  readonly #options: OutputProposerOptions;
  readonly #oracle: Contract;
  #schedule: OracleSchedule | undefined;
  #proposed = 0;
  /**
   * Outputs an L1 reorg dropped so far: each adds a wei to the next rounds' fees, so that an output sent again is
   * never the dropped transaction's bytes, which anvil may still count as known after `anvil_reorg`. A round starts
   * from the sender's mined nonce ("latest"): the previous round waited for its last receipt, so nothing of its
   * own is pending, and a count that still held a dropped transaction would leave a gap every output waits behind.
   */
  #dropped = 0n;

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
    let proposed = 0;
    while (!isStopping()) {
      const round = await this.#proposeDue();
      proposed += round;
      if (round < MAX_OUTPUTS_PER_ROUND) break;
    }
    return proposed;
  }

  /** Proposes the outputs due now (at most MAX_OUTPUTS_PER_ROUND) and returns how many. */
  async #proposeDue(): Promise<number> {
    const { l2, l1Signer } = this.#options;
    const l1 = l1Signer.provider;
    if (l1 === null) throw new Error("the proposer's L1 signer has no provider");
    const schedule = (this.#schedule ??= await this.#readSchedule());
    const [next, l2Head, l1Head] = await Promise.all([
      this.#oracle.getFunction("nextBlockNumber").staticCall() as Promise<bigint>,
      l2.getBlockNumber(),
      l1.getBlock("latest"),
    ]);
    if (l1Head === null) return 0;
    // The oracle refuses an output whose block does not exist yet or whose nominal time is not yet past on L1.
    const due: bigint[] = [];
    for (let block = next; block <= BigInt(l2Head) && due.length < MAX_OUTPUTS_PER_ROUND; block += schedule.submissionInterval) {
      const nominalTimestamp = schedule.startingTimestamp + (block - schedule.startingBlockNumber) * schedule.l2BlockTime;
      if (nominalTimestamp >= BigInt(l1Head.timestamp)) break;
      due.push(block);
    }
    if (due.length === 0) return 0;
    const roots = await Promise.all(due.map((block) => computeOutputRoot(l2, block)));
    const propose = this.#oracle.getFunction("proposeL2Output");
    const first = await propose.populateTransaction(roots[0], due[0], ZeroHash, 0n);
    const [gasLimit, fees, nonce] = await Promise.all([l1Signer.estimateGas(first), l1.getFeeData(), l1Signer.getNonce("latest")]);
    if (fees.maxFeePerGas === null || fees.maxPriorityFeePerGas === null) throw new Error("the L1 gave no EIP-1559 fee data");
    // Each output appends one entry to the oracle's list, the same work as the first's; only the calldata's cost
    // differs (its zero bytes are cheaper: another root, another block number), hence the margin over the estimate.
    const overrides = {
      gasLimit: (gasLimit * 6n) / 5n,
      maxFeePerGas: fees.maxFeePerGas + this.#dropped,
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas + this.#dropped,
    };
    const send = (index: number) => propose.send(roots[index], due[index], ZeroHash, 0n, { ...overrides, nonce: nonce + index });
    const sent: TransactionResponse[] = [];
    for (let index = 0; index < due.length; index += 1) sent.push(await send(index));
    // Not `wait()`: an L1 reorg can drop a transaction of the round or one before it (its nonce read before the
    // reorg), and the round must then end rather than wait for good.
    const receipt = await receiptUnlessDropped(sent);
    // A reverted or dropped output takes the ones after it along (each names the block after the one before): the
    // next round reads the oracle and the nonce again and proposes from where they are.
    if (receipt === null) {
      this.#dropped += 1n;
      throw new Error(`the output of L2 block ${due.at(-1)} was dropped from the L1 (a reorg); proposing it again`);
    }
    if (receipt.status !== 1) throw new Error(`the output of L2 block ${due.at(-1)} was not accepted`);
    this.#proposed += due.length;
    return due.length;
  }

  async #readSchedule(): Promise<OracleSchedule> {
    const read = (name: string) => this.#oracle.getFunction(name).staticCall() as Promise<bigint>;
    const [submissionInterval, l2BlockTime, startingBlockNumber, startingTimestamp] = await Promise.all([
      read("submissionInterval"),
      read("l2BlockTime"),
      read("startingBlockNumber"),
      read("startingTimestamp"),
    ]);
    return { submissionInterval, l2BlockTime, startingBlockNumber, startingTimestamp };
  }
}

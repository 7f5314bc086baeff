import { expect } from "chai";
import { Contract, Interface, parseEther, Wallet, zeroPadValue, ZeroHash } from "ethers";
import { createPublicClient, http, parseAbi } from "viem";
import { getL1BaseFee } from "viem/op-stack";

import { devAccount } from "../../../src/devnet/accounts.ts";
import { depositFromLog, depositHash, TRANSACTION_DEPOSITED_TOPIC } from "../../../src/devnet/op/deposit-transaction.ts";
import { decodeSetL1BlockValues, L1AttributesUpdater, type L1BlockValues } from "../../../src/devnet/op/l1-attributes.ts";
import { subscribeNewHeads } from "../../../src/devnet/op/new-heads.ts";
import type { OpDevnet } from "../../../src/devnet/op-devnet.ts";
import { opArtifact } from "../../../src/op/artifacts.ts";
import { L2_PREDEPLOYS } from "@avn/protocol/op-predeploys";
import { startTestDevnet, withL1StandingStill, type TestDevnet } from "../../helpers/devnet.ts";

const l1BlockAbi = new Interface(opArtifact("L1Block").abi);

/** One `setL1BlockValues` call found on L2, where it was mined. */
interface AttributesCall {
  values: L1BlockValues;
  from: string;
  l2Block: number;
  index: number;
  status: number;
}

/**
 * The L2's `L1Block` follows the L1 as op-node's L1 attributes deposit makes it (src/devnet/op/l1-attributes.ts):
 * what it holds, how far behind it is, across a restart, before deposits, and as a wallet reads it.
 */
describe("devnet: L1 attributes on L2 (L1Block)", function () {
  this.timeout(120_000);
  let net: TestDevnet;
  let devnet: OpDevnet;
  let l1HeadAtStart: number;
  let depositor: string;

  before(async function () {
    // L2 blocks every second, like the shared devnet: each wait for an L2 block halves.
    net = await startTestDevnet({ l2BlockTime: 1 });
    devnet = net.devnet;
    l1HeadAtStart = await devnet.l1Provider.getBlockNumber();
    depositor = (await new Contract(L2_PREDEPLOYS.L1Block, l1BlockAbi, devnet.l2Provider).getFunction("DEPOSITOR_ACCOUNT")()) as string;
  });
  after(async function () {
    const errors = net?.serviceErrors ?? [];
    await net?.stop();
    expect(errors, "the devnet's services never failed").to.deep.equal([]);
  });

  /** Every `setL1BlockValues` call mined in L2 blocks `from`..`to`, in chain order, with its receipt's status. */
  async function attributesCalls(from: number, to: number): Promise<AttributesCall[]> {
    const calls: AttributesCall[] = [];
    for (let number = from; number <= to; number++) {
      const block = (await devnet.l2Provider.send("eth_getBlockByNumber", ["0x" + number.toString(16), true])) as {
        transactions: Array<{ hash: string; from: string; to: string | null; input: string; transactionIndex: string }>;
      };
      for (const tx of block.transactions) {
        if (tx.to?.toLowerCase() !== L2_PREDEPLOYS.L1Block.toLowerCase()) continue;
        const receipt = await devnet.l2Provider.getTransactionReceipt(tx.hash);
        calls.push({
          values: decodeSetL1BlockValues(tx.input),
          from: tx.from,
          l2Block: number,
          index: Number(tx.transactionIndex),
          status: receipt!.status!,
        });
      }
    }
    return calls;
  }

  /** Checks that each call carries its L1 block's values, as op-node would set them. */
  async function expectValuesOfL1(calls: AttributesCall[]): Promise<void> {
    const batcherHash = zeroPadValue(devnet.accounts.deployer.address, 32).toLowerCase(); // what SystemConfig holds
    for (const call of calls) {
      const l1Block = (await devnet.l1Provider.getBlock(Number(call.values.number)))!;
      expect(call.from.toLowerCase(), "sent by the depositor account").to.equal(depositor.toLowerCase());
      expect(call.status, `the values of L1 block ${call.values.number} were set`).to.equal(1);
      expect(call.values.hash).to.equal(l1Block.hash);
      expect(call.values.timestamp).to.equal(BigInt(l1Block.timestamp));
      expect(call.values.basefee).to.equal(l1Block.baseFeePerGas);
      expect(call.values.sequenceNumber).to.equal(0n);
      expect(call.values.batcherHash.toLowerCase()).to.equal(batcherHash);
      expect([call.values.l1FeeOverhead, call.values.l1FeeScalar]).to.deep.equal([0n, 0n]);
    }
  }

  /** The L1 block numbers of `calls` must run one by one, each block once, in L2 order. */
  function expectConsecutive(calls: AttributesCall[], first: number): void {
    expect(calls.map((call) => Number(call.values.number))).to.deep.equal(calls.map((_, i) => first + i));
    const positions = calls.map((call) => call.l2Block * 1_000_000 + call.index);
    expect(positions).to.deep.equal([...positions].sort((a, b) => a - b));
  }

  it("sets L1Block to each L1 block's number, timestamp, base fee and hash, from the L1 head at start, block after block", async function () {
    for (let i = 0; i < 3; i++) await devnet.l1Provider.send("evm_mine", []);
    const head = await devnet.l1Provider.getBlockNumber();
    await devnet.l1Attributes.caughtUp(head);

    const calls = await attributesCalls(0, await devnet.l2Provider.getBlockNumber());
    // It began at the L1 head of the devnet's start (give or take the one block L1 may mine meanwhile),
    // not at the L1's genesis, and has set every block since, in order.
    const first = Number(calls[0].values.number);
    expect(first).to.be.within(l1HeadAtStart - 1, l1HeadAtStart + 1);
    expectConsecutive(calls, first);
    expect(Number(calls.at(-1)!.values.number)).to.be.at.least(head);
    await expectValuesOfL1(calls);

    // Only the depositor account may set them: the access rule of the installed 0.17.3 contract holds.
    const data = l1BlockAbi.encodeFunctionData("setL1BlockValues", [head, 0n, 0n, ZeroHash, 0n, ZeroHash, 0n, 0n]);
    const refusal = await devnet.l2Provider.call({ from: Wallet.createRandom().address, to: L2_PREDEPLOYS.L1Block, data }).then(
      () => undefined,
      (error: Error) => error,
    );
    expect(refusal?.message).to.match(/only the depositor account can set L1 block values/);
  });

  it("knows in each L2 block every L1 block there was when the previous L2 block came, at each of six L2 blocks", async function () {
    // The L1 mines more often than the L2 (the proposer's output of each L2 block, the 2 s interval, any
    // transaction), so the lag counted in L1 blocks varies; what the updater promises is a time: an L1 block
    // mined before one L2 block is known by the next. The L1 head "when an L2 block came" is the last L1
    // head announced to this process before that L2 block was, taken from the L1's own newHeads without a
    // read: a read after the L2 event would see blocks the L1 mined meanwhile.
    let l1Head = await devnet.l1Provider.getBlockNumber();
    const l1Heads = subscribeNewHeads(devnet.l1.node.wsUrl, (block) => (l1Head = Math.max(l1Head, block)));
    const arrivals: Array<{ l2Block: number; l1Head: number }> = [];
    try {
      await l1Heads.ready;
      await new Promise<void>((resolve, reject) => {
        const l2Heads = subscribeNewHeads(
          devnet.l2.node.wsUrl,
          (l2Block) => {
            arrivals.push({ l2Block, l1Head });
            if (arrivals.length === 7) {
              l2Heads.close();
              resolve();
            }
          },
          reject,
        );
      });
    } finally {
      l1Heads.close();
    }
    for (const [previous, next] of arrivals.slice(0, -1).map((arrival, i) => [arrival, arrivals[i + 1]] as const)) {
      expect(next.l2Block, "L2 blocks announced one by one").to.equal(previous.l2Block + 1);
      const known = await devnet.l1Attributes.knownBlock(next.l2Block);
      expect(
        known,
        `L2 block ${next.l2Block} knows L1 block ${known}; the L1 head was ${previous.l1Head} when L2 block ${previous.l2Block} came`,
      ).to.be.at.least(previous.l1Head);
    }
  });

  it("follows the L1 across a restart: a new updater catches up from L1Block.number(), every block in order", async function () {
    const l1 = devnet.l1Provider;
    await devnet.l1Attributes.caughtUp(await l1.getBlockNumber());
    await devnet.l1Attributes.stop();
    // Calls already queued are mined with the next L2 block; from then on nothing moves.
    const [stoppedAt] = await nextL2Blocks(devnet, 1);
    const known = await devnet.l1Attributes.knownBlock(stoppedAt);
    for (let i = 0; i < 5; i++) await l1.send("evm_mine", []);
    await nextL2Blocks(devnet, 2);
    expect(await devnet.l1Attributes.knownBlock("pending"), "nothing is set while the updater is down").to.equal(known);

    // A new process: nothing in memory, only what L1Block holds on chain.
    const restarted = new L1AttributesUpdater({
      l1,
      l2: devnet.l2Provider,
      l1WsUrl: devnet.l1.node.wsUrl,
      l2WsUrl: devnet.l2.node.wsUrl,
      systemConfig: devnet.l1Contracts.SystemConfig,
      onError: (error) => net.serviceErrors.push(`restarted L1 attributes: ${String(error)}`),
    });
    restarted.start();
    try {
      const head = await l1.getBlockNumber();
      expect(head - known).to.be.at.least(5);
      await restarted.caughtUp(head);
    } finally {
      await restarted.stop();
    }
    // The devnet's own updater, started again, carries on from the chain too (its memory is stale).
    devnet.l1Attributes.start();
    const head = await l1.getBlockNumber();
    await devnet.l1Attributes.caughtUp(head);

    const calls = await attributesCalls(stoppedAt + 1, await devnet.l2Provider.getBlockNumber());
    expectConsecutive(calls, known + 1);
    expect(Number(calls.at(-1)!.values.number)).to.be.at.least(head);
    await expectValuesOfL1(calls);
  });

  it("puts a deposit's L1 attributes before the deposit on L2, also while the updater is down (the relay asks for them)", async function () {
    // Down, so that only the relay's request can bring the deposit's L1 block to L1Block in time.
    await devnet.l1Attributes.stop();
    try {
      const sender = new Wallet(devAccount(4).privateKey, devnet.l1Provider);
      const portal = new Contract(devnet.l1Contracts.OptimismPortal, opArtifact("OptimismPortal").abi, sender);
      const receipt = await (
        await portal.getFunction("depositTransaction")(sender.address, 0n, 100_000n, false, "0x", {
          value: parseEther("0.1"),
          gasLimit: 500_000n,
        })
      ).wait();
      const log = receipt!.logs.find((entry: { topics: readonly string[] }) => entry.topics[0] === TRANSACTION_DEPOSITED_TOPIC)!;
      const deposit = await devnet.l2Provider.waitForTransaction(depositHash(depositFromLog(log)), 1, 30_000);
      expect(deposit?.status).to.equal(1);

      const calls = await attributesCalls(deposit!.blockNumber - 3, deposit!.blockNumber);
      const ofDepositBlock = calls.find((call) => Number(call.values.number) === receipt!.blockNumber);
      expect(ofDepositBlock, `the values of L1 block ${receipt!.blockNumber} near the deposit`).to.not.equal(undefined);
      expect(ofDepositBlock!.l2Block * 1_000_000 + ofDepositBlock!.index).to.be.lessThan(deposit!.blockNumber * 1_000_000 + deposit!.index);
      expect(await devnet.l1Attributes.knownBlock(deposit!.blockNumber)).to.be.at.least(receipt!.blockNumber);
    } finally {
      devnet.l1Attributes.start();
    }
  });

  it("shows a wallet or explorer reading through the chain's URL the L1 block's values, and still an L1 fee of 0", async function () {
    const l2 = createPublicClient({ transport: http(devnet.l2.rpcUrl) });
    const l1 = createPublicClient({ transport: http(devnet.l1.rpcUrl) });
    // With the L1 standing still, L1Block stays at its head once it got there: every read below agrees.
    await withL1StandingStill(devnet.l1Provider, async () => {
      const head = Number(await l1.getBlockNumber());
      await devnet.l1Attributes.caughtUp(head);
      const abi = parseAbi([
        "function number() view returns (uint64)",
        "function timestamp() view returns (uint64)",
        "function basefee() view returns (uint256)",
        "function hash() view returns (bytes32)",
      ]);
      const read = <F extends "number" | "timestamp" | "basefee" | "hash">(functionName: F) =>
        l2.readContract({ address: L2_PREDEPLOYS.L1Block, abi, functionName });
      const [number, timestamp, basefee, hash] = await Promise.all([read("number"), read("timestamp"), read("basefee"), read("hash")]);
      expect(number).to.equal(BigInt(head));
      const l1Block = await l1.getBlock({ blockNumber: number });
      expect([number, timestamp, basefee, hash]).to.deep.equal([l1Block.number, l1Block.timestamp, l1Block.baseFeePerGas, l1Block.hash]);
      // viem's OP action for a wallet's fee display reads the L1 base fee from GasPriceOracle, which reads L1Block.
      expect(await getL1BaseFee(l2)).to.equal(l1Block.baseFeePerGas);
      // The fee scalar is 0 (the devnet charges no L1 data fee): the oracle's L1 fee stays 0.
      const oracle = new Contract(L2_PREDEPLOYS.GasPriceOracle, opArtifact("GasPriceOracle").abi, devnet.l2Provider);
      expect(await oracle.getFunction("getL1Fee")("0x" + "ff".repeat(200))).to.equal(0n);
    });
  });
});

/** The numbers of the next `count` L2 blocks, as the L2 announces them. */
async function nextL2Blocks(devnet: OpDevnet, count: number): Promise<number[]> {
  const numbers: number[] = [];
  await new Promise<void>((resolve, reject) => {
    const heads = subscribeNewHeads(
      devnet.l2.node.wsUrl,
      (number) => {
        numbers.push(number);
        if (numbers.length < count) return;
        heads.close();
        resolve();
      },
      reject,
    );
  });
  return numbers;
}

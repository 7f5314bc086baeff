import { expect } from "chai";
import type { JsonRpcProvider, JsonRpcSigner } from "ethers";

import { startAnvil, type AnvilInstance } from "../../../src/devnet/anvil.ts";
import { receiptUnlessDropped } from "../../../src/devnet/op/receipt-unless-dropped.ts";
import { devnetProvider } from "../../../src/devnet/op-devnet.ts";

/** What the devnet's output proposer waits on after sending: a receipt, or word that a reorg dropped the transaction. */
describe("devnet: a transaction's receipt, or null once a reorg dropped it", function () {
  this.timeout(60_000);
  let anvil: AnvilInstance;
  let provider: JsonRpcProvider;
  let sender: JsonRpcSigner;

  before(async function () {
    anvil = await startAnvil({ chainId: 900 });
    provider = devnetProvider(anvil.rpcUrl, 900);
    sender = await provider.getSigner(0);
    await provider.send("anvil_mine", ["0x5"]);
  });
  after(async function () {
    provider?.destroy();
    await anvil?.stop();
  });
  afterEach(async function () {
    await provider.send("evm_setAutomine", [true]);
  });

  const transfer = () => sender.sendTransaction({ to: sender.address, value: 1n });

  it("answers a mined transaction's receipt, and waits across blocks for a pending one", async function () {
    const mined = await transfer();
    expect((await receiptUnlessDropped(mined))?.hash).to.equal(mined.hash);

    await provider.send("evm_setAutomine", [false]);
    const pending = await transfer();
    const waiting = receiptUnlessDropped(pending);
    await provider.send("evm_mine", []); // an empty block first: the wait goes on
    await provider.send("evm_mine", []);
    const receipt = await waiting;
    expect(receipt?.hash).to.equal(pending.hash);
    expect(receipt?.blockNumber).to.be.a("number");
  });

  it("answers null for a transaction an L1 reorg took out of the chain", async function () {
    const sent = await transfer();
    await sent.wait();
    // Two blocks on top of it, then a reorg of depth 3 (the chaos run's): its block is replaced with an empty one.
    await provider.send("anvil_mine", ["0x2"]);
    await provider.send("anvil_reorg", [3, []]);
    expect(await receiptUnlessDropped(sent)).to.equal(null);
    // The sender's nonce went back to the dropped transaction's: the next one takes it.
    expect(await provider.getTransactionCount(sender.address)).to.equal(sent.nonce);
  });

  it("answers null once a pending transaction it waits for leaves the pool unmined", async function () {
    await provider.send("evm_setAutomine", [false]);
    const sent = await transfer();
    const waiting = receiptUnlessDropped(sent);
    await provider.send("anvil_dropTransaction", [sent.hash]);
    await provider.send("evm_mine", []);
    expect(await waiting).to.equal(null);
  });
});

import { expect } from "chai";
import { Wallet, type JsonRpcProvider, type JsonRpcSigner } from "ethers";

import { devAccount } from "../../../src/devnet/accounts.ts";

import { startAnvil, type AnvilInstance } from "../../../src/devnet/anvil.ts";
import { receiptUnlessDropped } from "../../../src/devnet/op/receipt-unless-dropped.ts";
import { devnetProvider } from "../../../src/devnet/op-devnet.ts";

/** What the devnet's output proposer waits on after sending: a receipt, or word that a reorg dropped the transaction. */
describe("devnet: a batch's last receipt, or null once a reorg left it unminable", function () {
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
    expect((await receiptUnlessDropped([mined]))?.hash).to.equal(mined.hash);

    await provider.send("evm_setAutomine", [false]);
    const pending = await transfer();
    const waiting = receiptUnlessDropped([pending]);
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
    expect(await receiptUnlessDropped([sent])).to.equal(null);
    // The sender's nonce went back to the dropped transaction's: the next one takes it.
    expect(await provider.getTransactionCount(sender.address)).to.equal(sent.nonce);
  });

  it("answers the last receipt of a batch sent back to back, and null once a reorg took a transaction of it out", async function () {
    const first = await sender.getNonce("latest");
    const batch: Awaited<ReturnType<typeof transfer>>[] = [];
    for (let index = 0; index < 3; index += 1)
      batch.push(await sender.sendTransaction({ to: sender.address, value: 1n, nonce: first + index }));
    expect((await receiptUnlessDropped(batch))?.hash).to.equal(batch[2].hash);
    // The batch's last two blocks replaced: its first transaction stays, and the batch can no longer be mined whole.
    await provider.send("anvil_reorg", [2, []]);
    expect(await receiptUnlessDropped(batch)).to.equal(null);
  });

  it("answers null for a batch queued behind a nonce that a reorg took back, which the node answers as pending for good", async function () {
    // What the proposer met under load: its nonce read before a reorg dropped its previous output, its batch sent
    // after. Raw transactions, as the proposer's wallet sends them.
    const wallet = new Wallet(devAccount(1).privateKey, provider);
    const previous = await wallet.sendTransaction({ to: wallet.address, value: 1n });
    await previous.wait();
    const nonceReadBeforeTheReorg = await wallet.getNonce("latest");
    await provider.send("anvil_reorg", [1, []]);
    expect(await provider.getTransactionCount(wallet.address, "latest")).to.equal(previous.nonce);
    const queued = await wallet.sendTransaction({ to: wallet.address, value: 1n, nonce: nonceReadBeforeTheReorg });
    const seen = await provider.getTransaction(queued.hash);
    expect(seen?.blockNumber, "anvil answers the queued transaction as pending").to.equal(null);
    expect(await receiptUnlessDropped([queued])).to.equal(null);
  });

  it("refuses a batch that is not one sender's consecutive nonces", async function () {
    const one = await transfer();
    const two = await transfer();
    const refusal = (batch: (typeof one)[]) =>
      receiptUnlessDropped(batch).then(
        () => "answered",
        (error: Error) => error.message,
      );
    expect(await refusal([])).to.match(/no transaction to wait for/);
    expect(await refusal([two, one])).to.match(/one sender's transactions at consecutive nonces/);
  });

  it("answers null once a pending transaction it waits for leaves the pool unmined", async function () {
    await provider.send("evm_setAutomine", [false]);
    const sent = await transfer();
    const waiting = receiptUnlessDropped([sent]);
    await provider.send("anvil_dropTransaction", [sent.hash]);
    await provider.send("evm_mine", []);
    expect(await waiting).to.equal(null);
  });
});

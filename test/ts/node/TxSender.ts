import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

import { expect } from "chai";
import { JsonRpcProvider, keccak256, parseUnits, toQuantity, Wallet } from "ethers";

import { devAccount } from "../../../src/devnet/accounts.ts";
import { startAnvil, type AnvilInstance } from "../../../src/devnet/anvil.ts";
import { NodeStateStore } from "../../../src/node/state-store.ts";
import { TxSender } from "../../../src/node/tx-sender.ts";
import { eventually } from "../../helpers/devnet.ts";
import { captureLogs, type LogLine } from "./log-capture.ts";
import { devnetProvider } from "../../../src/devnet/op-devnet.ts";

const CHAIN_ID = 31_337n;

/** The node's transaction sender against a real anvil whose mining the test controls. */
describe("circuit node: transaction sender (nonces, journal, fee bumps, drops) on anvil", function () {
  this.timeout(60_000);
  let anvil: AnvilInstance;
  let provider: JsonRpcProvider;
  let dir: string;
  let store: NodeStateStore;
  let wallet: Wallet;
  let sender: TxSender | undefined;
  const lost: Array<number | undefined> = [];
  let logs: LogLine[] = [];

  before(async function () {
    anvil = await startAnvil({ chainId: Number(CHAIN_ID) });
    provider = devnetProvider(anvil.rpcUrl, Number(CHAIN_ID));
  });
  after(async function () {
    provider?.destroy();
    await anvil?.stop();
  });
  beforeEach(async function () {
    dir = await mkdtemp(path.join(tmpdir(), "tx-sender-"));
    store = new NodeStateStore(path.join(dir, "state.sqlite"));
    // A fresh funded wallet per test, so nonces start at 0.
    wallet = new Wallet(Wallet.createRandom().privateKey, provider);
    await provider.send("anvil_setBalance", [wallet.address, "0x56BC75E2D63100000"]);
    lost.length = 0;
    await provider.send("evm_setAutomine", [true]);
  });
  afterEach(async function () {
    await sender?.stop();
    sender = undefined;
    store.close();
    await rm(dir, { recursive: true, force: true });
    await provider.send("evm_setAutomine", [true]);
  });

  const startSender = async (overrides: Partial<ConstructorParameters<typeof TxSender>[0]> = {}) => {
    const { logger, lines } = captureLogs();
    logs = lines;
    sender = new TxSender({
      wallet,
      provider: () => provider,
      store,
      chainId: CHAIN_ID,
      feeBumpAfterMs: 60_000,
      maxFeePerGas: parseUnits("1000", "gwei"),
      checkIntervalMs: 100,
      onVotesLost: (block) => lost.push(block),
      logger,
      ...overrides,
    });
    await sender.recover();
    return sender;
  };
  const target = devAccount(3).address;

  it("sends after journaling, with its own nonces, and reports the outcome", async function () {
    const tx = await startSender();
    const first = await tx.send("test", target, "0x", [{ jobId: 1n, licenseId: 7n, jobBlock: 3 }]);
    const second = await tx.send("test", target, "0x");
    expect(await first.outcome).to.equal("mined");
    expect(await second.outcome).to.equal("mined");
    expect(store.hasVote(1n, 7n)).to.equal(true);
    expect(await provider.getTransactionCount(wallet.address)).to.equal(2);
  });

  it("after a crash between journal and broadcast, sends the journaled transaction as signed, never a new one", async function () {
    const raw = await wallet.signTransaction({
      type: 2,
      chainId: CHAIN_ID,
      nonce: 0,
      to: target,
      data: "0x",
      gasLimit: 30_000n,
      maxFeePerGas: parseUnits("10", "gwei"),
      maxPriorityFeePerGas: parseUnits("1", "gwei"),
    });
    store.recordTx({ nonce: 0, kind: "test", raw, hash: keccak256(raw) }, [{ jobId: 9n, licenseId: 1n, jobBlock: 5 }]);
    await startSender();
    await eventually(
      () => provider.getTransactionReceipt(keccak256(raw)),
      (receipt) => receipt !== null,
    );
    await eventually(
      async () => store.pendingTxs().length,
      (count) => count === 0,
    );
    expect(await provider.getTransactionCount(wallet.address)).to.equal(1);
    expect(store.hasVote(9n, 1n)).to.equal(true);
  });

  it("bumps the fees of the lowest pending nonce only, up to the cap, and keeps every hash", async function () {
    await provider.send("evm_setAutomine", [false]);
    const tx = await startSender({ feeBumpAfterMs: 200, maxFeePerGas: parseUnits("1000", "gwei") });
    const first = await tx.send("test", target, "0x");
    await tx.send("test", target, "0x");
    await eventually(
      async () => store.pendingTxs()[0].hashes.length,
      (count) => count >= 3,
      10_000,
    );
    expect(store.pendingTxs()[1].hashes.length).to.equal(1); // waits behind the first: not bumped
    await provider.send("evm_mine", []);
    expect(await first.outcome).to.equal("mined");
    await provider.send("evm_mine", []);
    await eventually(
      async () => store.pendingTxs().length,
      (count) => count === 0,
    );
  });

  it("stops bumping at the fee cap", async function () {
    await provider.send("evm_setAutomine", [false]);
    const fees = await provider.getFeeData();
    const tx = await startSender({ feeBumpAfterMs: 100, maxFeePerGas: fees.maxFeePerGas! });
    await tx.send("test", target, "0x");
    await eventually(async () => logs.some((line) => line.msg.includes("at the cap")), Boolean, 10_000);
    expect(store.pendingTxs()[0].hashes.length).to.equal(1);
    await provider.send("evm_mine", []);
  });

  it("drops a transaction whose nonce another one used, forgetting its votes and asking for a rescan", async function () {
    await provider.send("evm_setAutomine", [false]);
    const tx = await startSender();
    await tx.send("test", target, "0x", [{ jobId: 4n, licenseId: 2n, jobBlock: 11 }]);
    // Another process with the same key replaces nonce 0 with a dearer transaction, which is mined.
    const replacement = await wallet.signTransaction({
      type: 2,
      chainId: CHAIN_ID,
      nonce: 0,
      to: wallet.address,
      gasLimit: 21_000n,
      maxFeePerGas: parseUnits("500", "gwei"),
      maxPriorityFeePerGas: parseUnits("100", "gwei"),
    });
    await provider.broadcastTransaction(replacement);
    await provider.send("evm_mine", []);
    await eventually(
      async () => lost,
      (blocks) => blocks.includes(11),
    );
    expect(store.hasVote(4n, 2n)).to.equal(false);
    expect(store.pendingTxs()).to.deep.equal([]);
  });

  it("cancels a transaction the chain refuses outright, so later nonces are not blocked", async function () {
    const tx = await startSender();
    const refused = await tx.send("test", target, "0x", [{ jobId: 6n, licenseId: 1n, jobBlock: 21 }], 100_000_000n); // above the block gas limit
    expect(await refused.outcome).to.equal("dropped");
    expect(store.hasVote(6n, 1n)).to.equal(false);
    expect(lost).to.include(21);
    const next = await tx.send("test", target, "0x");
    expect(await next.outcome).to.equal("mined");
    expect(await provider.getTransactionCount(wallet.address)).to.equal(2); // the cancellation, then the next
  });

  it("re-prices a transaction whose fee cap a rising base fee overtook, on the same RPC, without failing over", async function () {
    const failovers: string[] = [];
    const tx = await startSender({ onUpstreamError: () => failovers.push("failover") });
    // The fees come from the latest block; the block being built then asks a base fee far above them, as
    // when the base fee climbs between reading the fees and the broadcast. anvil refuses such a
    // transaction ("max fee per gas less than block base fee").
    const baseFee = (await provider.getFeeData()).maxFeePerGas! * 2n;
    await provider.send("anvil_setNextBlockBaseFeePerGas", [toQuantity(baseFee)]);
    const sent = await tx.send("test", target, "0x", [{ jobId: 8n, licenseId: 3n, jobBlock: 30 }]);
    expect(await sent.outcome).to.equal("mined");
    expect(failovers).to.deep.equal([]);
    expect(lost).to.deep.equal([]);
    expect(store.hasVote(8n, 3n)).to.equal(true);
    expect(logs.filter((line) => line.errorKind === "fee-cap-below-base-fee").map((line) => line.msg)).to.deep.equal([
      "the base fee rose above the transaction's fee cap: signing it again with higher fees",
    ]);
    const block = (await provider.getBlock("latest", true))!;
    const mined = block.prefetchedTransactions.find((candidate) => candidate.from === wallet.address)!;
    expect(mined.maxFeePerGas! >= baseFee).to.equal(true);
    expect(await provider.getTransactionCount(wallet.address)).to.equal(1); // the same nonce, re-signed
  });
});

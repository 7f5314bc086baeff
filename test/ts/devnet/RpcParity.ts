import { expect } from "chai";
import { Contract, parseEther, Transaction, Wallet } from "ethers";

import { opArtifact } from "../../../src/op/artifacts.ts";
import { L2_PREDEPLOYS } from "@avn/protocol/op-predeploys";
import { devnetProvider } from "../../../src/devnet/op-devnet.ts";
import { eventually, sharedTestDevnet, type TestDevnet } from "../../helpers/devnet.ts";

/**
 * Calls ordinary tools make that a public OP chain answers (docs/devnet-and-bridge.md, "What tools see"),
 * asked through the chains' URLs as those tools ask them.
 */
describe("devnet: answers wallets' and explorers' calls as a public OP chain does", function () {
  this.timeout(120_000);
  let net: TestDevnet;

  before(async function () {
    net = await sharedTestDevnet();
  });

  it("has the GasPriceOracle, whose L1 fee (0: the devnet's fee scalar is 0) is what an L2 transaction is charged beyond gas", async function () {
    const l2 = devnetProvider(net.devnet.l2.rpcUrl, net.devnet.l2.chainId);
    try {
      const sender = Wallet.createRandom(l2);
      await net.devnet.l2Provider.send("anvil_setBalance", [sender.address, "0x" + parseEther("1").toString(16)]);
      const sent = await sender.sendTransaction({ to: Wallet.createRandom().address, value: 1n });
      const receipt = (await sent.wait())!;
      const oracle = new Contract(L2_PREDEPLOYS.GasPriceOracle, opArtifact("GasPriceOracle").abi, l2);
      const unsigned = Transaction.from(sent).unsignedSerialized;
      expect(await oracle.getFunction("getL1Fee")(unsigned)).to.equal(0n);
      expect(await oracle.getFunction("baseFee")()).to.be.a("bigint");
      expect(await l2.getBalance(sender.address)).to.equal(parseEther("1") - 1n - receipt.gasUsed * receipt.gasPrice);
    } finally {
      l2.destroy();
    }
  });

  it("traces an L2 deposit transaction with the call tracer, trace_transaction and Otterscan's ots_ calls", async function () {
    const l1 = devnetProvider(net.devnet.l1.rpcUrl, net.devnet.l1.chainId);
    const l2 = devnetProvider(net.devnet.l2.rpcUrl, net.devnet.l2.chainId);
    try {
      const sender = Wallet.createRandom(l1);
      await net.devnet.l1Provider.send("anvil_setBalance", [sender.address, "0x" + parseEther("1").toString(16)]);
      // A plain ETH deposit: value sent to the portal becomes a 0x7e transaction from the same address on L2.
      const deposit = await (await sender.sendTransaction({ to: net.devnet.l1Contracts.OptimismPortal, value: 5n })).wait();
      expect(deposit!.status).to.equal(1);
      const l2Tx = await waitForL2Deposit(l2, sender.address);
      const call = (await l2.send("debug_traceTransaction", [l2Tx, { tracer: "callTracer" }])) as { from: string; value: string };
      expect(call.from.toLowerCase()).to.equal(sender.address.toLowerCase());
      expect(BigInt(call.value)).to.equal(5n);
      expect(((await l2.send("trace_transaction", [l2Tx])) as unknown[]).length).to.be.at.least(1);
      expect(((await l2.send("ots_traceTransaction", [l2Tx])) as unknown[]).length).to.be.at.least(1);
      expect(await l2.send("ots_getApiLevel", [])).to.equal(8);
    } finally {
      l1.destroy();
      l2.destroy();
    }
  });
});

/** The hash of the L2 deposit transaction that credits `address`, found from its L2 balance and the block's transactions. */
async function waitForL2Deposit(l2: ReturnType<typeof devnetProvider>, address: string): Promise<string> {
  await eventually(
    () => l2.getBalance(address),
    (balance) => balance === 5n,
  );
  // Searched backwards from the head: the deposit is in one of the last few blocks.
  const head = await l2.getBlockNumber();
  for (let number = head; number > head - 20; number--) {
    const block = (await l2.send("eth_getBlockByNumber", ["0x" + number.toString(16), true])) as {
      transactions: Array<{ hash: string; type: string; from: string }>;
    };
    const found = block.transactions.find((tx) => tx.type === "0x7e" && tx.from.toLowerCase() === address.toLowerCase());
    if (found !== undefined) return found.hash;
  }
  throw new Error("no deposit transaction from the sender in the last 20 L2 blocks");
}

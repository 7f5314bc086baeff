import { expect } from "chai";
import { JsonRpcProvider, parseUnits } from "ethers";
import { network } from "hardhat";

import { ANVIL_MNEMONIC, devAccount } from "../../../src/devnet/accounts.ts";
import { startAnvil, type AnvilInstance } from "../../../src/devnet/anvil.ts";

/**
 * The devnet's Hardhat networks (devnetL1, devnetL2: Ignition's deployments, the scripts, the tests' signers)
 * sign with anvil's development accounts themselves and submit raw transactions. Through anvil's own signing
 * (eth_sendTransaction), anvil 1.7.1 files a transaction sent while its predecessor waits in the pool as
 * ready with no tie to it and mines ready transactions by fee cap: a later nonce priced higher ran first,
 * failed "nonce too high" and was removed for good. That is how the shared test devnet's L2 deployment lost
 * StakedToken_grantProtocolRole in CI (docs/devnet-and-bridge.md, "The lost deployment transaction").
 */
describe("devnet: the Hardhat networks sign the devnet's transactions themselves", function () {
  this.timeout(60_000);
  let anvil: AnvilInstance;
  let provider: JsonRpcProvider;
  beforeEach(async function () {
    anvil = await startAnvil({ chainId: 901, optimism: true });
    provider = new JsonRpcProvider(anvil.rpcUrl, 901, { staticNetwork: true });
  });
  afterEach(async function () {
    provider.destroy();
    await anvil.stop();
  });

  it("holds anvil's ten funded development accounts, in anvil's order", async function () {
    const connection = await network.create({ network: "devnetL2", override: { url: anvil.rpcUrl } });
    try {
      const signers = await connection.ethers.getSigners();
      const anvilAccounts = (await provider.send("eth_accounts", [])) as string[];
      expect(signers.map((signer) => signer.address.toLowerCase())).to.deep.equal(anvilAccounts.map((account) => account.toLowerCase()));
      expect(signers[0].address).to.equal(devAccount(0).address);
      expect(ANVIL_MNEMONIC).to.equal("test test test test test test test test test test test junk");
    } finally {
      await connection.close();
    }
  });

  it("mines a later nonce priced above the one before it after it, in one block, where anvil's signing lost it", async function () {
    const connection = await network.create({ network: "devnetL2", override: { url: anvil.rpcUrl } });
    try {
      const [sender] = await connection.ethers.getSigners();
      await provider.send("evm_setAutomine", [false]);
      const nonce = await provider.getTransactionCount(sender.address, "latest");
      const transfer = (offset: number, maxFeeGwei: string) =>
        sender.sendTransaction({
          to: sender.address,
          value: 1n,
          nonce: nonce + offset,
          gasLimit: 21_000n,
          maxFeePerGas: parseUnits(maxFeeGwei, "gwei"),
          maxPriorityFeePerGas: parseUnits("1", "gwei"),
        });
      // Both wait in the pool, the second priced higher, as Ignition's are when the base fee rose between them.
      const first = await transfer(0, "2");
      const second = await transfer(1, "3");
      await provider.send("evm_mine", []);
      const receipts = await Promise.all([first, second].map((sent) => provider.getTransactionReceipt(sent.hash)));
      expect(
        receipts.map((receipt) => receipt?.status),
        "both mined and succeeded",
      ).to.deep.equal([1, 1]);
      expect(receipts[0]!.blockNumber).to.equal(receipts[1]!.blockNumber);
      expect(receipts[0]!.index).to.be.lessThan(receipts[1]!.index);
      // Asked as it is (ethers' provider would answer the nonce read above from its 250 ms cache).
      expect(Number(await provider.send("eth_getTransactionCount", [sender.address, "latest"]))).to.equal(nonce + 2);
    } finally {
      await connection.close();
    }
  });
});

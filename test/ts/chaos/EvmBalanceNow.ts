import { expect } from "chai";
import { ContractFactory, Interface, type JsonRpcProvider, type JsonRpcSigner } from "ethers";
import hre from "hardhat";

import { evmBalanceNow, EVM_FRESHNESS_MS } from "../../../src/chaos/load.ts";
import { startAnvil, type AnvilInstance } from "../../../src/devnet/anvil.ts";
import { devnetProvider } from "../../../src/devnet/op-devnet.ts";

const BURN = "0x000000000000000000000000000000000000dEaD";
const transfer = new Interface(["function transfer(address,uint256)"]).encodeFunctionData("transfer", [BURN, 1n]);

/** How the chaos and soak clients judge an Ethereum answer's balance (src/chaos/load.ts). */
describe("chaos load: which Ethereum balances an answer may carry", function () {
  this.timeout(60_000);
  let anvil: AnvilInstance;
  let provider: JsonRpcProvider;
  let holder: JsonRpcSigner;
  let token: string;

  before(async function () {
    anvil = await startAnvil({ chainId: 900 });
    provider = devnetProvider(anvil.rpcUrl, 900);
    holder = await provider.getSigner(0);
    const artifact = await hre.artifacts.readArtifact("PlainERC20");
    const contract = await new ContractFactory(artifact.abi, artifact.bytecode, holder).deploy(holder.address, 100n);
    await contract.waitForDeployment();
    token = await contract.getAddress();
  });
  after(async function () {
    provider?.destroy();
    await anvil?.stop();
  });

  const move = async () => (await holder.sendTransaction({ to: token, data: transfer })).wait();

  it("takes an attested answer's balance at its recent source block, which its own reads never saw, and not at an old one", async function () {
    const expected = evmBalanceNow(provider, token, holder.address, 1);
    const first = await provider.getBlockNumber(); // the holding's first block: 100
    const sentAt = performance.now();
    expect(await expected(sentAt)).to.include(100n);
    // Two moves in a row: 99 for one block only, between two reads of this client.
    const between = (await move())!.blockNumber;
    await move();
    expect(await expected(sentAt)).to.not.include(99n);
    expect(await expected(sentAt, between)).to.include(99n);
    // A request sent well after those reads: its window starts at the head they saw (two moves on), so the
    // holding's first block, older by more than the pin, does not count; the balance now does.
    const later = performance.now() + EVM_FRESHNESS_MS + 1;
    for (let i = 0; i < 3; i += 1) await move();
    const accepted = await expected(later, first);
    expect(accepted).to.not.include(100n);
    expect(accepted).to.include(95n);
  });
});

import { expect } from "chai";
import { Contract, ContractFactory, JsonRpcProvider, Wallet } from "ethers";
import hre from "hardhat";

import { HashPinnedEvmReads } from "../../../src/chains/evm/hash-pinned-reads.ts";
import { JsonRpcPool } from "../../../src/chains/rpc/json-rpc-pool.ts";
import { devAccount } from "../../../src/devnet/accounts.ts";
import { startAnvil, type AnvilInstance } from "../../../src/devnet/anvil.ts";
import { installMulticall3 } from "../../../src/devnet/op/l2.ts";
import { devnetProvider } from "../../../src/devnet/op-devnet.ts";

/** What the nodes read jobs with: a block named by its hash, on a real anvil that reorganizes (`anvil_reorg`). */
describe("source adapter: EVM reads pinned by block hash, across a reorg", function () {
  this.timeout(60_000);
  let anvil: AnvilInstance;
  let provider: JsonRpcProvider;
  let token: Contract;
  const holder = new Wallet(devAccount(1).privateKey);
  const receiver = Wallet.createRandom().address;

  before(async function () {
    anvil = await startAnvil({ chainId: 1, disableCodeSizeLimit: hre.globalOptions.coverage });
    provider = devnetProvider(anvil.rpcUrl, 1);
    await installMulticall3(provider);
    const artifact = await hre.artifacts.readArtifact("PlainERC20");
    const deployer = new Wallet(devAccount(0).privateKey, provider);
    token = (await new ContractFactory(artifact.abi, artifact.bytecode, deployer).deploy(holder.address, 1_000n)) as Contract;
    await token.waitForDeployment();
    // Blocks above the deployment, so a reorg of depth 3 replaces none of the contract's.
    await provider.send("anvil_mine", ["0x5"]);
  });
  after(async function () {
    provider?.destroy();
    await anvil?.stop();
  });

  it("names the block it read by hash, and sees that block replaced after a reorg of depth 3", async function () {
    // Every request the reads send, to see how they name the block.
    const pool = new JsonRpcPool({ urls: [anvil.rpcUrl], timeoutMs: 5_000 });
    const sent: Array<{ method: string; params: unknown[] }> = [];
    const recording = {
      request: <T>(method: string, params: unknown[]) => {
        sent.push({ method, params });
        return pool.request<T>(method, params);
      },
    } as unknown as JsonRpcPool;
    const reads = new HashPinnedEvmReads(recording, { headTtlMs: 0 });
    const asset = await token.getAddress();
    const before = await reads.balanceOf(asset, holder.address);
    expect(before.balance).to.equal(1_000n);
    expect(before.blockHash).to.equal((await provider.getBlock(Number(before.blockNumber)))!.hash);
    expect(await reads.blockHashAt(before.blockNumber)).to.equal(before.blockHash);
    // The balance's eth_call named the block by its hash, never by its number (EIP-1898).
    const calls = sent.filter((request) => request.method === "eth_call");
    expect(calls).to.have.length.above(0);
    for (const call of calls) expect(call.params.at(-1)).to.deep.equal({ blockHash: before.blockHash });

    // The last three blocks replaced; the new ones carry a transfer the old ones did not.
    const transfer = token.interface.encodeFunctionData("transfer", [receiver, 400n]);
    await provider.send("anvil_reorg", [3, [[{ from: holder.address, to: asset, data: transfer }, 0]]]);

    const replaced = await reads.blockHashAt(before.blockNumber);
    expect(replaced).to.be.a("string").and.not.equal(before.blockHash);
    const after = await reads.balanceOf(asset, holder.address);
    expect(after.balance).to.equal(600n);
    expect(after.blockHash).to.equal(await reads.blockHashAt(after.blockNumber));
    expect(after.blockHash).to.not.equal(before.blockHash);
    expect(await reads.blockHashAt(after.blockNumber + 100n)).to.equal(undefined);
  });
});

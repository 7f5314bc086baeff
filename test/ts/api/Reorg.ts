import { expect } from "chai";
import { Interface } from "ethers";

import { ReorgWatch } from "../../../src/chains/evm/reorg-watch.ts";
import { JsonRpcPool } from "../../../src/chains/rpc/json-rpc-pool.ts";
import { devnetProvider } from "../../../src/devnet/op-devnet.ts";
import { startSourceFixtures, type SourceFixtures } from "../../../src/devnet/source-chains.ts";
import { startTestApi, type TestApi } from "../../helpers/api.ts";

const transfer = new Interface(["function transfer(address,uint256)"]);
const BURN = "0x000000000000000000000000000000000000dEaD";

/**
 * The API's answers about Ethereum through a reorg on a real anvil (`anvil_reorg`): the reorg replaces the
 * head at the same block number, which the result cache's key (the block number) alone cannot tell.
 */
describe("API: Ethereum answers follow a reorg of the head", function () {
  this.timeout(60_000);
  let sources: SourceFixtures;
  let api: TestApi | undefined;

  before(async function () {
    sources = await startSourceFixtures();
  });
  after(async function () {
    await api?.close();
    await sources?.stop();
  });

  const ask = async () => {
    const response = await fetch(`${api!.baseUrl}/api/ccq-evm`, {
      method: "POST",
      headers: { authorization: api!.apiKey, "content-type": "application/json" },
      body: JSON.stringify({ user_address: sources.evm.holder, contract_address: sources.evm.erc20 }),
    });
    expect(response.status).to.equal(200);
    const { data } = (await response.json()) as { data: { asset: { QueryResult: string } } };
    return BigInt(data.asset.QueryResult);
  };

  it("answers the new branch within a second of the reorg, though a cached answer of the replaced head would last a minute", async function () {
    // A minute of result cache: without the reorg watch, the replaced head's answer would be served all that time.
    api = await startTestApi(sources, {
      cacheTtlMs: 60_000,
      evmReorgs: new ReorgWatch(new JsonRpcPool({ urls: [sources.anvil.rpcUrl], timeoutMs: 2_000 })),
    });
    const source = devnetProvider(sources.anvil.rpcUrl, 1);
    try {
      await source.send("anvil_mine", ["0x3"]);
      const before = await ask();
      expect(await ask()).to.equal(before); // from the cache
      const head = await source.getBlock("latest");
      await source.send("anvil_reorg", [
        1,
        [[{ from: sources.evm.holder, to: sources.evm.erc20, data: transfer.encodeFunctionData("transfer", [BURN, 1n]) }, 0]],
      ]);
      expect((await source.getBlock("latest"))!.number).to.equal(head!.number); // the same number, another block
      const reorgedAt = Date.now();
      let now = await ask();
      while (now === before && Date.now() - reorgedAt < 5_000) now = await ask();
      expect(now).to.equal(before - 1n);
      // The head is read once a second at most (docs/api.md): the reorg is seen within about that.
      expect(Date.now() - reorgedAt).to.be.below(2_500);
      expect(await ask()).to.equal(before - 1n);
    } finally {
      source.destroy();
    }
  });
});

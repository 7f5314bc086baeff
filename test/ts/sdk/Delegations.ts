import { expect } from "chai";
import { Contract, JsonRpcProvider, Wallet, ZeroHash } from "ethers";

import { DELEGATE_REGISTRY_ABI, DELEGATE_REGISTRY_ADDRESS } from "@avn/protocol/delegations";
import { AvnApiError, AvnClient } from "../../../packages/sdk/src/index.ts";
import { EvmBalanceReader } from "../../../src/chains/evm/balance-reader.ts";
import { JsonRpcPool } from "../../../src/chains/rpc/json-rpc-pool.ts";
import { devAccount } from "../../../src/devnet/accounts.ts";
import { ERC721_TOKENS_HELD } from "../../../src/devnet/demo-holdings.ts";
import { startSourceFixtures, type SourceFixtures } from "../../../src/devnet/source-chains.ts";
import { startTestApi, type TestApi } from "../../helpers/api.ts";

/** `includeDelegations` through the SDK, against the real API over a chain with delegate.xyz's registry. */
describe("@avn/sdk includeDelegations", function () {
  this.timeout(120_000);
  let sources: SourceFixtures;
  let api: TestApi;
  let client: AvnClient;
  const hot = Wallet.createRandom().address;
  const holder = new Wallet(devAccount(7).privateKey).address; // holds the demo ERC-721

  before(async function () {
    sources = await startSourceFixtures();
    const provider = new JsonRpcProvider(sources.anvil.rpcUrl, undefined, { staticNetwork: true, cacheTimeout: -1 });
    const registry = new Contract(DELEGATE_REGISTRY_ADDRESS, DELEGATE_REGISTRY_ABI, new Wallet(devAccount(7).privateKey, provider));
    await (await registry.getFunction("delegateAll")(hot, ZeroHash, true)).wait();
    provider.destroy();
    // The head read afresh for each request: every answer is after the delegation.
    const evm = new EvmBalanceReader({ rpc: new JsonRpcPool({ urls: [sources.anvil.rpcUrl], timeoutMs: 2_000 }), headTtlMs: 0 });
    api = await startTestApi(sources, { evm });
    client = new AvnClient({ baseUrl: api.baseUrl, apiKey: api.apiKey });
  });
  after(async function () {
    await api?.close();
    await sources?.stop();
  });

  it("counts the cold wallet's tokens with includeDelegations, lists it, and not without", async function () {
    const query = { userAddress: hot, contractAddress: sources.evm.erc721 };
    const counted = await client.evmBalance({ ...query, includeDelegations: true });
    expect([counted.balance, counted.wallets]).to.deep.equal([ERC721_TOKENS_HELD, [holder]]);
    const plain = await client.evmBalance(query);
    expect([plain.balance, plain.wallets]).to.deep.equal([0n, undefined]);
    const batch = await client.evmBatch([{ ...query, includeDelegations: true }, query]);
    expect(batch.results.map((entry) => (entry.ok ? [entry.balance, entry.wallets] : entry.status))).to.deep.equal([
      [ERC721_TOKENS_HELD, [holder]],
      [0n, undefined],
    ]);
  });

  it("passes the API's 400 on with attest", async function () {
    const refused = await client
      .evmBalance({ userAddress: hot, contractAddress: sources.evm.erc721, includeDelegations: true }, { attest: true })
      .catch((error: unknown) => error);
    expect(refused).to.be.instanceOf(AvnApiError);
    expect(refused).to.include({ status: 400 });
    expect((refused as Error).message).to.match(/include_delegations cannot be attested/);
  });
});

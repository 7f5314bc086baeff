import { expect } from "chai";
import { Contract, getCreate2Address, JsonRpcProvider, keccak256, Wallet, ZeroHash } from "ethers";

import { conditionHash } from "@avn/protocol/conditions";
import { DELEGATE_REGISTRY_ABI, DELEGATE_REGISTRY_ADDRESS } from "@avn/protocol/delegations";
import { DELEGATIONS_NOT_ATTESTABLE, DELEGATIONS_NOT_PROVABLE } from "../../../src/api/server/chains.ts";
import { devAccount } from "../../../src/devnet/accounts.ts";
import { buildDelegateRegistry, PUBLISHED_INIT_CODE_HASH } from "../../../src/devnet/delegate-registry.ts";
import { ABOVE_2_53, ERC1155_ITEM_ID, ERC721_TOKENS_HELD } from "../../../src/devnet/demo-holdings.ts";
import { startSourceFixtures, type SourceFixtures } from "../../../src/devnet/source-chains.ts";
import { startTestApi, type TestApi } from "../../helpers/api.ts";
import { parseJsonExact } from "../../../packages/sdk/src/json.ts";
import { EvmBalanceReader } from "../../../src/chains/evm/balance-reader.ts";
import { JsonRpcPool } from "../../../src/chains/rpc/json-rpc-pool.ts";

/** The immutable CREATE2 factory and salt delegate.xyz deployed the registry with (their Makefile). */
const CREATE2_FACTORY = "0x0000000000FFe8B47B3e2130213B802212439497";
const REGISTRY_SALT = "0x00000000000000000000000000000000000000002bbc593dd77cb93fbb932d5f";
/** A `rights` value other than the full-rights default: such a delegation is not counted. */
const SCOPED_RIGHTS = "0x0000000000000000000000000000000000000000000000000000000000000abc";

/** delegate.xyz v2 on the source chain, and `include_delegations` / `"delegations": true` over it. */
describe("API: delegate.xyz delegations counted (include_delegations, a leaf's delegations)", function () {
  this.timeout(120_000);
  let sources: SourceFixtures;
  let api: TestApi;
  let provider: JsonRpcProvider;

  before(async function () {
    sources = await startSourceFixtures();
    // The head read afresh for each request (not once a second): each answer sees the delegation just mined.
    const evm = new EvmBalanceReader({ rpc: new JsonRpcPool({ urls: [sources.anvil.rpcUrl], timeoutMs: 2_000 }), headTtlMs: 0 });
    api = await startTestApi(sources, { evm });
    // Straight to anvil (no RPC front): no read cache, so that back-to-back sends get fresh nonces.
    provider = new JsonRpcProvider(sources.anvil.rpcUrl, undefined, { staticNetwork: true, cacheTimeout: -1 });
    // The ERC-1155 collector (account 10) is past anvil's ten funded accounts: ETH for its delegation.
    await provider.send("anvil_setBalance", [sources.evm.collector, "0xde0b6b3a7640000"]);
  });
  after(async function () {
    provider?.destroy();
    await api?.close();
    await sources?.stop();
  });

  const registryAs = (account: number) =>
    new Contract(DELEGATE_REGISTRY_ADDRESS, DELEGATE_REGISTRY_ABI, new Wallet(devAccount(account).privateKey, provider));
  const send = async (call: Promise<{ wait(): Promise<unknown> }>) => void (await (await call).wait());
  const post = async (path: string, body: unknown) => {
    const response = await fetch(`${api.baseUrl}${path}`, {
      method: "POST",
      headers: { authorization: api.apiKey, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    // Exact integers: the ERC-20 balance is above 2^53.
    return { status: response.status, json: parseJsonExact(await response.text()) as { message?: string; data: Record<string, unknown> } };
  };
  const balanceOf = async (body: Record<string, unknown>) => {
    const { status, json } = await post("/api/ccq-evm", body);
    expect(status, json.message).to.equal(200);
    return {
      balance: BigInt((json.data.asset as { balance: number | bigint }).balance),
      wallets: json.data.wallets as string[] | undefined,
      data: json.data,
    };
  };
  const holder = () => new Wallet(devAccount(7).privateKey).address; // sources.evm.holder, checksummed

  it("is delegate.xyz's published registry: the init code's hash, its CREATE2 address, the runtime code placed there", async function () {
    const { initCode, runtimeCode } = buildDelegateRegistry();
    expect(keccak256(initCode)).to.equal(PUBLISHED_INIT_CODE_HASH);
    expect(getCreate2Address(CREATE2_FACTORY, REGISTRY_SALT, keccak256(initCode))).to.equal(DELEGATE_REGISTRY_ADDRESS);
    expect(await provider.getCode(DELEGATE_REGISTRY_ADDRESS)).to.equal(runtimeCode);
  });

  it("counts a cold wallet's whole ERC-721 balance for a hot wallet after delegateAll, only when asked, and none once revoked", async function () {
    const hot = Wallet.createRandom().address;
    const asked = { user_address: hot, contract_address: sources.evm.erc721 };
    expect(await balanceOf({ ...asked, include_delegations: true })).to.deep.include({ balance: 0n, wallets: [] });

    await send(registryAs(7).getFunction("delegateAll")(hot, ZeroHash, true));
    const counted = await balanceOf({ ...asked, include_delegations: true });
    expect(counted).to.deep.include({ balance: ERC721_TOKENS_HELD, wallets: [holder()] });
    expect(Object.keys(counted.data)).to.deep.equal(["user_address", "asset", "wallets"]);
    expect((counted.data.asset as { QueryResult: string }).QueryResult).to.equal(`0x${ERC721_TOKENS_HELD.toString(16).padStart(64, "0")}`);
    const plain = await balanceOf(asked);
    expect(plain.balance).to.equal(0n);
    expect(plain.data).to.not.have.property("wallets");
    // include_delegations: false is the plain answer.
    expect((await balanceOf({ ...asked, include_delegations: false })).data).to.deep.equal(plain.data);

    // v2 revokes by the same call with enable false (v1's revokeAll is gone).
    await send(registryAs(7).getFunction("delegateAll")(hot, ZeroHash, false));
    expect(await balanceOf({ ...asked, include_delegations: true })).to.deep.include({ balance: 0n, wallets: [] });
  });

  it("counts an ERC-20 amount up to the balance, an ERC-721 token still owned, an ERC-1155 amount of the id asked; not scoped rights", async function () {
    const hot = Wallet.createRandom().address;
    const erc20 = { user_address: hot, contract_address: sources.evm.erc20, include_delegations: true };
    await send(registryAs(7).getFunction("delegateERC20")(hot, sources.evm.erc20, ZeroHash, 5n));
    expect(await balanceOf(erc20)).to.deep.include({ balance: 5n, wallets: [holder()] });
    await send(registryAs(7).getFunction("delegateERC20")(hot, sources.evm.erc20, ZeroHash, ABOVE_2_53 * 2n));
    expect((await balanceOf(erc20)).balance).to.equal(ABOVE_2_53);

    const erc721 = { user_address: hot, contract_address: sources.evm.erc721, include_delegations: true };
    await send(registryAs(7).getFunction("delegateERC721")(hot, sources.evm.erc721, 2n, ZeroHash, true));
    await send(registryAs(7).getFunction("delegateERC721")(hot, sources.evm.erc721, 99n, ZeroHash, true)); // no such token
    expect((await balanceOf(erc721)).balance).to.equal(1n);

    const collector = new Wallet(devAccount(10).privateKey).address;
    const erc1155 = {
      user_address: hot,
      contract_address: sources.evm.erc1155,
      token_id: ERC1155_ITEM_ID.toString(),
      include_delegations: true,
    };
    await send(registryAs(10).getFunction("delegateERC1155")(hot, sources.evm.erc1155, ERC1155_ITEM_ID, ZeroHash, 2n));
    expect(await balanceOf(erc1155)).to.deep.include({ balance: 2n, wallets: [collector] });
    expect((await balanceOf({ ...erc1155, token_id: ABOVE_2_53.toString() })).balance).to.equal(0n);

    // A delegation for a scoped right is not the full-rights default: not counted.
    const scopedHot = Wallet.createRandom().address;
    await send(registryAs(7).getFunction("delegateAll")(scopedHot, SCOPED_RIGHTS, true));
    expect(await balanceOf({ ...erc721, user_address: scopedHot })).to.deep.include({ balance: 0n, wallets: [] });
  });

  it("reads a delegation as its kind: no amount on an ERC-721, no token on an ERC-20; lists only wallets lending something", async function () {
    const hot = Wallet.createRandom().address;
    const erc721 = { user_address: hot, contract_address: sources.evm.erc721, include_delegations: true };
    const erc20 = { user_address: hot, contract_address: sources.evm.erc20, include_delegations: true };
    // An amount on the ERC-721 and a token on the ERC-20: delegate.xyz's own checks honour neither.
    await send(registryAs(7).getFunction("delegateERC20")(hot, sources.evm.erc721, ZeroHash, 2n));
    await send(registryAs(7).getFunction("delegateERC721")(hot, sources.evm.erc20, 1n, ZeroHash, true));
    expect(await balanceOf(erc721)).to.deep.include({ balance: 0n, wallets: [] });
    expect(await balanceOf(erc20)).to.deep.include({ balance: 0n, wallets: [] });
    // A wallet holding nothing that delegates everything (anyone may delegate to anyone) lends nothing: not listed.
    await send(registryAs(8).getFunction("delegateAll")(hot, ZeroHash, true));
    expect(await balanceOf(erc721)).to.deep.include({ balance: 0n, wallets: [] });
    // Whole-wallet and token delegations from one wallet: its balance, once.
    await send(registryAs(7).getFunction("delegateERC721")(hot, sources.evm.erc721, 1n, ZeroHash, true));
    await send(registryAs(7).getFunction("delegateContract")(hot, sources.evm.erc721, ZeroHash, true));
    expect(await balanceOf(erc721)).to.deep.include({ balance: ERC721_TOKENS_HELD, wallets: [holder()] });
  });

  it("refuses include_delegations with attest or proof, and a value that is not a boolean, each with its 400", async function () {
    const body = { user_address: holder(), contract_address: sources.evm.erc20, include_delegations: true };
    const attested = await post("/api/ccq-evm?attest=true", body);
    expect([attested.status, attested.json.message]).to.deep.equal([400, DELEGATIONS_NOT_ATTESTABLE]);
    const proved = await post("/api/ccq-evm?proof=true", body);
    expect([proved.status, proved.json.message]).to.deep.equal([400, DELEGATIONS_NOT_PROVABLE]);
    const malformed = await post("/api/ccq-evm", { ...body, include_delegations: "yes" });
    expect(malformed.status).to.equal(400);
    expect(
      (await post("/api/ccq-svm", { owner_address: sources.svm.owner, token_mint_address: sources.svm.splMint, include_delegations: true }))
        .status,
    ).to.equal(400);
  });

  it("answers a batch item with include_delegations as the single route would", async function () {
    const hot = Wallet.createRandom().address;
    await send(registryAs(7).getFunction("delegateContract")(hot, sources.evm.erc721, ZeroHash, true));
    const { status, json } = await post("/api/ccq-evm/batch", [
      { user_address: hot, contract_address: sources.evm.erc721, include_delegations: true },
      { user_address: hot, contract_address: sources.evm.erc721 },
    ]);
    expect(status).to.equal(200);
    const results = (json.data as { results: Array<{ data: { asset: { balance: number }; wallets?: string[] } }> }).results;
    expect(results.map((result) => [BigInt(result.data.asset.balance), result.data.wallets])).to.deep.equal([
      [ERC721_TOKENS_HELD, [holder()]],
      [0n, undefined],
    ]);
  });

  it("counts a condition leaf's delegations only with \"delegations\": true, which alone changes the condition's hash", async function () {
    const hot = Wallet.createRandom().address;
    await send(registryAs(7).getFunction("delegateAll")(hot, ZeroHash, true));
    const leaf = { chain: "ethereum", contract_address: sources.evm.erc721, min: ERC721_TOKENS_HELD.toString() };
    const ask = (condition: unknown) => post("/api/conditions", { owners: { ethereum: hot }, condition });
    const without = await ask(leaf);
    const withDelegations = await ask({ ...leaf, delegations: true });
    expect([without.status, without.json.data.verdict]).to.deep.equal([200, false]);
    expect([withDelegations.status, withDelegations.json.data.verdict]).to.deep.equal([200, true]);
    expect((withDelegations.json.data.leaves as Array<Record<string, unknown>>)[0]).to.deep.include({ delegations: true, holds: true });
    // false is the default: the same normal form and hash as without; true is another condition.
    expect(conditionHash({ ...leaf, delegations: false })).to.equal(conditionHash(leaf));
    expect(conditionHash({ ...leaf, delegations: true })).to.not.equal(conditionHash(leaf));
    expect(withDelegations.json.data.conditionHash).to.equal(conditionHash({ ...leaf, delegations: true }));
    // Solana leaves refuse it, by path.
    const solana = await post("/api/conditions", {
      owners: { solana: sources.svm.owner },
      condition: { chain: "solana", token_mint_address: sources.svm.splMint, delegations: true },
    });
    expect(solana.status).to.equal(400);
    expect(solana.json.message).to.match(/^condition\.delegations/);
  });
});

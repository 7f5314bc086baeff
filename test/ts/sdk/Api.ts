import { expect } from "chai";

import { ABOVE_2_53, startSourceFixtures, type SourceFixtures } from "../../../src/devnet/source-chains.ts";
import { ERC721_TOKENS_HELD, SPL_ACCOUNT_AMOUNTS } from "../../../src/devnet/demo-holdings.ts";
import { AvnApiError, AvnClient, conditionHash, ownersHash } from "../../../packages/sdk/src/index.ts";
import { startTestApi, type TestApi } from "../../helpers/api.ts";

/** An address with no code on the EVM source: the API's 404. */
const NO_CONTRACT = "0x000000000000000000000000000000000000dEaD";

/**
 * The SDK against the API itself (its real Fastify server over anvil and the LiteSVM endpoint with the demo
 * holdings): the field names, envelopes and integers the client reads are the server's, not a copy.
 */
describe("@avn/sdk against the real API", function () {
  this.timeout(120_000);
  let sources: SourceFixtures;
  let api: TestApi;
  let client: AvnClient;

  before(async function () {
    sources = await startSourceFixtures();
    api = await startTestApi(sources);
    client = new AvnClient({ baseUrl: api.baseUrl, apiKey: api.apiKey });
  });
  after(async function () {
    await api?.close();
    await sources?.stop();
  });

  it("reads ERC-20, ERC-721 and ERC-1155 balances, the ones above 2^53 exactly", async function () {
    const { erc20, erc721, erc1155, holder, collector } = sources.evm;
    const fungible = await client.evmBalance({ userAddress: holder, contractAddress: erc20 });
    expect(fungible.balance).to.equal(ABOVE_2_53);
    expect(fungible.queryResult).to.equal(`0x${ABOVE_2_53.toString(16).padStart(64, "0")}`);
    expect(fungible.response.data).to.deep.equal({
      user_address: holder,
      asset: { balance: ABOVE_2_53, QueryResult: fungible.queryResult },
    });
    expect((await client.evmBalance({ userAddress: holder, contractAddress: erc721 })).balance).to.equal(ERC721_TOKENS_HELD);
    const item = await client.evmBalance({ userAddress: collector, contractAddress: erc1155, tokenId: ABOVE_2_53 });
    expect(item.balance).to.equal(ABOVE_2_53);
    expect(item.response.data.token_id).to.equal(ABOVE_2_53.toString());
  });

  it("reads SPL, Token-2022 and empty Solana holdings", async function () {
    const { owner, splMint, t22Mint, emptyOwner } = sources.svm;
    expect((await client.svmBalance({ ownerAddress: owner, tokenMintAddress: splMint })).balance).to.equal(
      SPL_ACCOUNT_AMOUNTS[0] + SPL_ACCOUNT_AMOUNTS[1],
    );
    expect((await client.svmBalance({ ownerAddress: owner, tokenMintAddress: t22Mint })).balance).to.equal(ABOVE_2_53);
    const empty = await client.svmBalance({ ownerAddress: emptyOwner, tokenMintAddress: splMint });
    expect([empty.balance, empty.queryResult]).to.deep.equal([0n, ""]);
  });

  it("answers batches item by item, at one stated position", async function () {
    const { erc20, holder, empty } = sources.evm;
    const evm = await client.evmBatch([
      { userAddress: holder, contractAddress: erc20 },
      { userAddress: "0x1234", contractAddress: erc20 },
      { userAddress: empty, contractAddress: erc20 },
      { userAddress: holder, contractAddress: NO_CONTRACT },
    ]);
    expect(evm.blockNumber > 0n).to.equal(true);
    expect(evm.results.map((entry) => [entry.status, entry.ok ? entry.balance : entry.message])).to.deep.equal([
      [200, ABOVE_2_53],
      [400, "user_address must be 0x followed by 40 hexadecimal digits"],
      [200, 0n],
      [404, "No token found at the given address"],
    ]);

    const { owner, splMint, t22Mint } = sources.svm;
    const svm = await client.svmBatch([
      { ownerAddress: owner, tokenMintAddress: t22Mint },
      { ownerAddress: owner, tokenMintAddress: splMint },
    ]);
    expect(svm.slot >= 0n).to.equal(true);
    expect(svm.results.map((entry) => entry.ok && entry.balance)).to.deep.equal([
      ABOVE_2_53,
      SPL_ACCOUNT_AMOUNTS[0] + SPL_ACCOUNT_AMOUNTS[1],
    ]);
  });

  it("evaluates a condition, with the hashes the SDK computes itself", async function () {
    const { erc20, erc721, holder } = sources.evm;
    const condition = {
      all: [
        { chain: "ethereum" as const, contract_address: erc20, min: ABOVE_2_53.toString() },
        { not: { chain: "ethereum" as const, contract_address: erc721, min: (ERC721_TOKENS_HELD + 1n).toString() } },
      ],
    };
    const verdict = await client.conditions({ owners: { ethereum: holder }, condition });
    expect(verdict.verdict).to.equal(true);
    expect(verdict.conditionHash).to.equal(conditionHash(condition));
    expect(verdict.ownersHash).to.equal(ownersHash({ ethereum: holder }));
    expect(verdict.sourceBlocks.ethereum! > 0n).to.equal(true);
    expect(verdict.leaves?.map(({ balance, holds }) => [balance, holds])).to.deep.equal([
      [ABOVE_2_53, true],
      [ERC721_TOKENS_HELD, false],
    ]);
    const hidden = await client.conditions({ owners: { ethereum: holder }, condition, reveal: false });
    expect(hidden.leaves).to.equal(undefined);
  });

  it("throws the API's own refusals as AvnApiError: a bad key, a bad field, a missing asset, a feature not offered", async function () {
    const refusal = (call: Promise<unknown>) =>
      call.then(
        () => expect.fail("the call should have failed"),
        (error: unknown) => {
          expect(error).to.be.instanceOf(AvnApiError);
          const { status, code, message } = error as AvnApiError;
          return [status, code, message];
        },
      );
    const { erc20, holder } = sources.evm;
    const stranger = new AvnClient({ baseUrl: api.baseUrl, apiKey: "avn_not-a-key" });
    expect(await refusal(stranger.evmBalance({ userAddress: holder, contractAddress: erc20 }))).to.deep.equal([
      401,
      "UNAUTHORIZED",
      "Unknown API key",
    ]);
    expect(await refusal(client.evmBalance({ userAddress: holder, contractAddress: NO_CONTRACT }))).to.deep.equal([
      404,
      "NOT_FOUND",
      "No token found at the given address",
    ]);
    expect(await refusal(client.conditions({ owners: { ethereum: holder }, condition: { all: [] } }))).to.deep.equal([
      400,
      "BAD_REQUEST",
      "condition.all must be a non-empty array of conditions",
    ]);
    // This server runs no attestation hub and knows no L2: 501, which no retry changes.
    expect(await refusal(client.evmBalance({ userAddress: holder, contractAddress: erc20 }, { attest: true }))).to.deep.equal([
      501,
      "NOT_IMPLEMENTED",
      "Attested answers are not enabled on this server",
    ]);
  });
});

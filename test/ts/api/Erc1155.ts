import { expect } from "chai";
import { ContractFactory, getAddress, hexlify, randomBytes, Wallet } from "ethers";
import hre from "hardhat";

import { TOKEN_ID_NOT_ATTESTABLE } from "../../../src/api/server/chains.ts";
import { devAccount } from "../../../src/devnet/accounts.ts";
import { devnetProvider } from "../../../src/devnet/op-devnet.ts";
import { ABOVE_2_53, startSourceFixtures, type SourceFixtures } from "../../../src/devnet/source-chains.ts";
import { startTestApi, type TestApi } from "../../helpers/api.ts";
import { startAttestationL2, startHubApi, type AttestationL2 } from "../attestation/fixture.ts";

/** The ids the holder has: 0, a small one, and one above 2^53 (which a float would round). */
const ID_ZERO = 0n;
const ID_SMALL = 7n;
const ID_ABOVE_2_53 = 2n ** 200n + 3n;
const MAX_UINT256 = 2n ** 256n - 1n;
const word = (value: bigint) => `0x${value.toString(16).padStart(64, "0")}`;
const randomOwner = () => getAddress(hexlify(randomBytes(20)));

/** `token_id` on POST /api/ccq-evm and its batch: ERC-1155 balances, on a real server over a real anvil. */
describe("API: ERC-1155 balances (token_id) on /api/ccq-evm", function () {
  this.timeout(120_000);
  let sources: SourceFixtures;
  let api: TestApi;
  let erc1155: string;

  before(async function () {
    sources = await startSourceFixtures();
    const provider = devnetProvider(sources.anvil.rpcUrl, 1);
    try {
      const deployer = new Wallet(devAccount(0).privateKey, provider);
      const artifact = await hre.artifacts.readArtifact("PlainERC1155");
      const deployed = await new ContractFactory(artifact.abi, artifact.bytecode, deployer).deploy(
        sources.evm.holder,
        [ID_ZERO, ID_SMALL, ID_ABOVE_2_53],
        [5n, 11n, ABOVE_2_53],
      );
      await deployed.waitForDeployment();
      erc1155 = await deployed.getAddress();
    } finally {
      provider.destroy();
    }
    api = await startTestApi(sources);
  });
  after(async function () {
    await api?.close();
    await sources?.stop();
  });

  const post = (target: TestApi, path: string, body: unknown) =>
    fetch(`${target.baseUrl}${path}`, {
      method: "POST",
      headers: { authorization: target.apiKey, "content-type": "application/json" },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
  /** An error answer: its message matching `message`, or equal to it when a string. */
  const expectError = async (response: Response, status: number, message: RegExp | string) => {
    const text = await response.text();
    expect(response.status, text).to.equal(status);
    const body = JSON.parse(text) as { status: number; message: string };
    expect(body.status).to.equal(status);
    if (typeof message === "string") expect(body.message).to.equal(message);
    else expect(body.message).to.match(message);
  };
  const ask = (tokenId: unknown, owner = sources.evm.holder, asset = erc1155) =>
    post(api, "/api/ccq-evm", { user_address: owner, contract_address: asset, token_id: tokenId });
  /** The exact text of a 200 answer. */
  const answer = (data: string) => `{"status":200,"message":"Assets Fetched Successfully","data":${data}}`;
  const upstreamRequests = async () =>
    (await api.metrics.upstream.get()).values.filter((value) => value.labels.chain === "evm").reduce((sum, value) => sum + value.value, 0);

  describe("single answers", function () {
    it("answers an id and an amount above 2^53 exactly, echoing data.token_id normalised", async function () {
      const response = await ask(`000${ID_ABOVE_2_53}`);
      const text = await response.text();
      expect(response.status, text).to.equal(200);
      // The raw text, not JSON.parse: neither the id nor the balance may pass through a float. (token_id comes
      // after asset: the serializer writes the required properties first.)
      expect(text).to.equal(
        answer(
          `{"user_address":"${sources.evm.holder}","asset":{"balance":${ABOVE_2_53},"QueryResult":"${word(ABOVE_2_53)}"},"token_id":"${ID_ABOVE_2_53}"}`,
        ),
      );
    });

    it("answers id 0, a small id written with leading zeros, an unheld id, the largest id and an owner without tokens", async function () {
      const balance = async (tokenId: string, owner?: string) => {
        const response = await ask(tokenId, owner);
        const body = (await response.json()) as { status: number; data: { token_id: string; asset: { balance: number } } };
        expect(response.status).to.equal(200);
        return [body.data.token_id, body.data.asset.balance];
      };
      expect(await balance("0")).to.deep.equal(["0", 5]);
      expect(await balance("000")).to.deep.equal(["0", 5]);
      expect(await balance("007")).to.deep.equal(["7", 11]);
      expect(await balance("8")).to.deep.equal(["8", 0]);
      expect(await balance(MAX_UINT256.toString())).to.deep.equal([MAX_UINT256.toString(), 0]);
      expect(await balance("7", randomOwner())).to.deep.equal(["7", 0]);
    });

    it("caches by id: two ids of one owner at one block are two answers, two spellings of one id are one read", async function () {
      // One after the other at one block (nothing is mined meanwhile): the second finds the first in the cache.
      const balance = async (tokenId: string) =>
        ((await (await ask(tokenId)).json()) as { data: { asset: { balance: number } } }).data.asset.balance;
      expect([await balance("0"), await balance("7"), await balance("0")]).to.deep.equal([5, 11, 5]);
      const owner = randomOwner(); // never asked before: nothing cached
      const before = await upstreamRequests();
      const first = await (await ask("7", owner)).text();
      const second = await (await ask("0007", owner)).text();
      expect(second).to.equal(first);
      // One aggregate3 (the head was asked just before): the second spelling was answered from the cache.
      expect((await upstreamRequests()) - before).to.equal(1);
      // The ERC-20 answer of the same owner and contract is another key: the ERC-1155 is not an ERC-20.
      await expectError(await post(api, "/api/ccq-evm", { user_address: owner, contract_address: erc1155 }), 400, /^token_id is required/);
    });

    it("answers 404 for an ERC-20 or ERC-721 asked with token_id, and 400 naming token_id for an ERC-1155 asked without it", async function () {
      await expectError(await ask("7", sources.evm.holder, sources.evm.erc20), 404, /^No token found at the given address$/);
      await expectError(await ask("1", sources.evm.holder, sources.evm.erc721), 404, /No token found/);
      await expectError(await ask("1", sources.evm.holder, sources.evm.empty), 404, /No token found/);
      // Both ERC-1155 contracts (OpenZeppelin's here, the demo stack's): ERC-165 says what they are.
      for (const asset of [erc1155, sources.evm.erc1155])
        await expectError(
          await post(api, "/api/ccq-evm", { user_address: sources.evm.holder, contract_address: asset }),
          400,
          `token_id is required: the contract at ${getAddress(asset)} is an ERC-1155 token, whose balances are per token id`,
        );
      // Without ERC-165 (an empty account, an ERC-20) nothing changes: not found.
      await expectError(
        await post(api, "/api/ccq-evm", { user_address: sources.evm.holder, contract_address: sources.evm.empty }),
        404,
        /No token found/,
      );
    });

    it("answers 400 naming token_id for anything but a decimal string below 2^256", async function () {
      const malformed: unknown[] = [
        "-1",
        "1.5",
        "0x10",
        "1e3",
        "+7",
        " 7",
        "7 ",
        "",
        "1_000",
        "٣", // an Arabic-Indic digit: only ASCII digits count
        "1".repeat(79),
        (MAX_UINT256 + 1n).toString(),
        "9".repeat(78),
      ];
      for (const tokenId of malformed) {
        await expectError(await ask(tokenId), 400, /^token_id must be a decimal string of digits only \(at most 78\), below 2\^256$/);
      }
      for (const tokenId of [7, null, true, ["7"], { id: "7" }]) await expectError(await ask(tokenId), 400, /token_id must be string/);
      await expectError(await ask("1".repeat(101)), 400, /token_id must NOT have more than 100 characters/);
    });

    it("leaves answers without token_id byte-for-byte as they were", async function () {
      const { holder, erc20, erc721 } = sources.evm;
      const response = await post(api, "/api/ccq-evm", { user_address: holder, contract_address: erc20 });
      expect(response.status).to.equal(200);
      expect(await response.text()).to.equal(
        answer(`{"user_address":"${holder}","asset":{"balance":${ABOVE_2_53},"QueryResult":"${word(ABOVE_2_53)}"}}`),
      );
      const nft = await post(api, "/api/ccq-evm", { user_address: holder.toLowerCase(), contract_address: erc721 });
      expect(await nft.text()).to.equal(
        answer(`{"user_address":"${holder.toLowerCase()}","asset":{"balance":3,"QueryResult":"${word(3n)}"}}`),
      );
    });

    it("refuses token_id on /api/ccq-svm and its batch, whose body has no such field", async function () {
      const { owner, splMint } = sources.svm;
      await expectError(
        await post(api, "/api/ccq-svm", { owner_address: owner, token_mint_address: splMint, token_id: "1" }),
        400,
        /must NOT have additional properties/,
      );
      const batch = await post(api, "/api/ccq-svm/batch", [{ owner_address: owner, token_mint_address: splMint, token_id: "1" }]);
      const { results } = ((await batch.json()) as { data: { results: Array<{ status: number; message: string }> } }).data;
      expect(results).to.deep.equal([{ status: 400, message: "Invalid request: body must NOT have additional properties" }]);
    });

    it("documents token_id on the ccq-evm body, answer and batch item in /openapi.json, and not on ccq-svm", async function () {
      type Operation = {
        requestBody: { content: { "application/json": { schema: { properties?: object; items?: { properties: object } } } } };
        responses: { 200: { content: { "application/json": { schema: { properties: { data: { properties: object } } } } } } };
      };
      const spec = (await (await fetch(`${api.baseUrl}/openapi.json`)).json()) as { paths: Record<string, { post: Operation }> };
      const body = (path: string) => spec.paths[path].post.requestBody.content["application/json"].schema;
      const data = (path: string) => spec.paths[path].post.responses[200].content["application/json"].schema.properties.data.properties;
      expect(body("/api/ccq-evm").properties).to.have.property("token_id");
      expect(Object.keys(data("/api/ccq-evm"))).to.deep.equal([
        "user_address",
        "asset",
        "wallets",
        "token_id",
        "attestation",
        "eas",
        "proof",
      ]);
      expect(body("/api/ccq-evm/batch").items!.properties).to.have.property("token_id");
      expect(body("/api/ccq-svm").properties).to.not.have.property("token_id");
      expect(body("/api/ccq-svm/batch").items!.properties).to.not.have.property("token_id");
    });
  });

  describe("batch items", function () {
    it("answers items with token_id exactly as the single route would, beside ERC-20 items and bad items", async function () {
      const { holder, erc20 } = sources.evm;
      const fresh = randomOwner();
      const items = [
        { user_address: holder, contract_address: erc1155, token_id: ID_ABOVE_2_53.toString() },
        { user_address: holder, contract_address: erc20 },
        { user_address: fresh, contract_address: erc1155, token_id: "7" },
        { user_address: fresh, contract_address: erc20 },
        { user_address: fresh, contract_address: erc1155, token_id: "007" },
        { user_address: holder, contract_address: erc1155, token_id: "-1" },
        { user_address: holder, contract_address: erc1155, token_id: 7 },
        { user_address: holder, contract_address: erc20, token_id: "7" }, // an ERC-20 asked with an id: 404
        { user_address: holder, contract_address: erc1155 }, // an ERC-1155 asked without one: 400
        { user_address: holder, contract_address: erc1155, token_id: "0" },
      ];
      const singles: string[] = [];
      for (const item of items) singles.push(await (await post(api, "/api/ccq-evm", item)).text());
      const response = await post(api, "/api/ccq-evm/batch", items);
      const text = await response.text();
      expect(response.status, text).to.equal(200);
      const { blockNumber, results } = (JSON.parse(text) as { data: { blockNumber: number; results: Array<{ status: number }> } }).data;
      expect(text).to.equal(
        `{"status":200,"message":"Batch Processed Successfully","data":{"blockNumber":${blockNumber},"results":[${singles.join(",")}]}}`,
      );
      expect(results.map((entry) => entry.status)).to.deep.equal([200, 200, 200, 200, 200, 400, 400, 404, 400, 200]);
      expect(text).to.include(`"asset":{"balance":${ABOVE_2_53},"QueryResult":"${word(ABOVE_2_53)}"},"token_id":"${ID_ABOVE_2_53}"}`);
      expect(text).to.include(`{"user_address":"${fresh}","asset":{"balance":0,"QueryResult":"${word(0n)}"},"token_id":"7"}`);
      expect(text).to.include(`{"status":400,"message":"Invalid request: body/token_id must be string"}`);
    });

    it("reads fresh ERC-20 and ERC-1155 items of one batch in one aggregate3", async function () {
      const owners = Array.from({ length: 10 }, randomOwner);
      const items = owners.flatMap((owner) => [
        { user_address: owner, contract_address: sources.evm.erc20 },
        { user_address: owner, contract_address: erc1155, token_id: ID_ABOVE_2_53.toString() },
        { user_address: owner, contract_address: erc1155, token_id: "0" },
      ]);
      const headReadAt = performance.now(); // at the latest: the post below reads the head
      await post(api, "/api/ccq-evm", { user_address: sources.evm.holder, contract_address: sources.evm.erc20 }); // the head is known
      const before = await upstreamRequests();
      const response = await post(api, "/api/ccq-evm/batch", items);
      // The API asks for the head at most once a second: a batch answered after that second (npm test's load
      // once made it so) may also have asked for the block number, and still made one eth_call for all 30 items.
      const withinTheSecond = performance.now() - headReadAt < 1_000;
      const { results } = (
        (await response.json()) as { data: { results: Array<{ status: number; data: { asset: { balance: number } } }> } }
      ).data;
      expect(results.map((entry) => [entry.status, entry.data.asset.balance])).to.deep.equal(items.map(() => [200, 0]));
      const requests = (await upstreamRequests()) - before;
      if (withinTheSecond) expect(requests, "one eth_call, no block number (asked within the second)").to.equal(1);
      else expect(requests, "one eth_call, and perhaps the block number").to.be.within(1, 2);
    });
  });

  describe("?attest=true", function () {
    it("answers 400 for token_id with attest=true (the attestation does not bind the id); attest=false is a plain answer", async function () {
      const body = { user_address: sources.evm.holder, contract_address: erc1155, token_id: "7" };
      const attested = await post(api, "/api/ccq-evm?attest=true", body);
      await expectError(attested, 400, /^token_id cannot be attested: a BalanceAttestation does not bind the token id/);
      const plain = await post(api, "/api/ccq-evm?attest=false", body);
      expect(plain.status).to.equal(200);
      expect(await plain.text()).to.equal(await (await post(api, "/api/ccq-evm", body)).text());
      // Without the hub, the same request without token_id is the hub's 501: the 400 is about the request.
      await expectError(
        await post(api, "/api/ccq-evm?attest=true", { user_address: sources.evm.holder, contract_address: erc1155 }),
        501,
        /not enabled/,
      );
    });

    describe("with the attestation hub on", function () {
      let l2: AttestationL2;
      let hubApi: Awaited<ReturnType<typeof startHubApi>>;

      before(async function () {
        l2 = await startAttestationL2();
        hubApi = await startHubApi(sources, l2, l2.verifier);
      });
      after(async function () {
        await hubApi?.api.close();
        await l2?.stop();
      });

      it("answers 400 for token_id before any signature round; without token_id the hub is asked (no node connected: 503)", async function () {
        const body = { user_address: sources.evm.holder, contract_address: erc1155, token_id: "7" };
        const refused = await post(hubApi.api, "/api/ccq-evm?attest=true", body);
        await expectError(refused, 400, TOKEN_ID_NOT_ATTESTABLE);
        const rounds = async () => (await hubApi.metrics.attestationRounds.get()).values.reduce((sum, value) => sum + value.value, 0);
        expect(await rounds(), "no signature round was opened").to.equal(0);
        const withoutId = await post(hubApi.api, "/api/ccq-evm?attest=true", {
          user_address: sources.evm.holder,
          contract_address: sources.evm.erc20,
        });
        await expectError(withoutId, 503, /Attestation unavailable/);
        expect(await rounds(), "a round the hub could not hold is counted").to.equal(1);
      });
    });
  });
});

import { request as httpRequest } from "node:http";

import { expect } from "chai";
import { Contract, ContractFactory, getAddress, hexlify, randomBytes, Wallet } from "ethers";
import hre from "hardhat";

import { EvmBalanceReader } from "../../../src/chains/evm/balance-reader.ts";
import { DEFAULT_HEAD_TTL_MS } from "../../../src/chains/rpc/head-cache.ts";
import { JsonRpcPool } from "../../../src/chains/rpc/json-rpc-pool.ts";
import { devAccount } from "../../../src/devnet/accounts.ts";
import { startTestApi, type TestApi } from "../../helpers/api.ts";
import { ABOVE_2_53, startSourceFixtures, type SourceFixtures } from "../../../src/devnet/source-chains.ts";
import { MANY_ACCOUNTS, MANY_ACCOUNTS_AMOUNT } from "../../../src/devnet/demo-holdings.ts";
import { devnetProvider } from "../../../src/devnet/op-devnet.ts";

describe("API: POST /api/ccq-evm and /api/ccq-svm on a real server", function () {
  this.timeout(60_000);
  let sources: SourceFixtures;
  let api: TestApi;
  let baseUrl: string;
  let apiKey: string;

  before(async function () {
    sources = await startSourceFixtures();
    api = await startTestApi(sources);
    ({ baseUrl, apiKey } = api);
  });
  after(async function () {
    await api?.close();
    await sources?.stop();
  });

  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${baseUrl}${path}`, {
      method: "POST",
      headers: { authorization: apiKey, "content-type": "application/json", ...headers },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
  const expectError = async (response: Response, status: number, message?: RegExp) => {
    expect(response.status).to.equal(status);
    const body = (await response.json()) as { status: number; message: string };
    expect(body.status).to.equal(status);
    expect(body.message).to.be.a("string");
    if (message !== undefined) expect(body.message).to.match(message);
  };

  describe("ccq-evm", function () {
    it("answers an ERC-20 balance above 2^53 as an exact JSON integer, with the 32-byte QueryResult", async function () {
      const response = await post("/api/ccq-evm", { user_address: sources.evm.holder, contract_address: sources.evm.erc20 });
      expect(response.status).to.equal(200);
      const text = await response.text();
      expect(text).to.include(`"balance":${ABOVE_2_53}`); // not rounded through a float
      expect(JSON.parse(text)).to.deep.equal({
        status: 200,
        message: "Assets Fetched Successfully",
        data: {
          user_address: sources.evm.holder,
          asset: { balance: Number(ABOVE_2_53), QueryResult: `0x${ABOVE_2_53.toString(16).padStart(64, "0")}` },
        },
      });
    });

    it("answers an ERC-721 holder's count and a zero balance; accepts all-lowercase addresses and Bearer keys", async function () {
      const nft = await post(
        "/api/ccq-evm",
        { user_address: sources.evm.holder.toLowerCase(), contract_address: sources.evm.erc721.toLowerCase() },
        { authorization: `Bearer ${apiKey}` },
      );
      expect(nft.status).to.equal(200);
      const body = (await nft.json()) as { data: { user_address: string; asset: { balance: number } } };
      expect(body.data.asset.balance).to.equal(3);
      expect(body.data.user_address).to.equal(sources.evm.holder.toLowerCase());
      const zero = (await (
        await post("/api/ccq-evm", { user_address: sources.evm.empty, contract_address: sources.evm.erc20 })
      ).json()) as {
        data: { asset: { balance: number; QueryResult: string } };
      };
      expect(zero.data.asset).to.deep.equal({ balance: 0, QueryResult: `0x${"0".repeat(64)}` });
    });

    it("gives a fresh answer once the chain has moved: cached answers are keyed by block", async function () {
      const provider = devnetProvider(sources.anvil.rpcUrl, 1);
      // The API asks for the head at most once per DEFAULT_HEAD_TTL_MS: a server of its own whose head
      // cache reads a clock the test moves, so the head is asked again when the test says, not after a sleep.
      let now = Date.now();
      const evm = new EvmBalanceReader({ rpc: new JsonRpcPool({ urls: [sources.anvil.rpcUrl], timeoutMs: 2_000 }), now: () => now });
      const clocked = await startTestApi(sources, { evm });
      try {
        const minter = new Wallet(devAccount(0).privateKey, provider);
        const artifact = await hre.artifacts.readArtifact("PlainERC20");
        const deployed = await new ContractFactory(artifact.abi, artifact.bytecode, minter).deploy(minter.address, 100n);
        await deployed.waitForDeployment();
        const token = new Contract(await deployed.getAddress(), artifact.abi, minter);
        const receiver = getAddress(hexlify(randomBytes(20)));
        const ask = async () => {
          const response = await fetch(`${clocked.baseUrl}/api/ccq-evm`, {
            method: "POST",
            headers: { authorization: clocked.apiKey, "content-type": "application/json" },
            body: JSON.stringify({ user_address: receiver, contract_address: await token.getAddress() }),
          });
          expect(response.status, await response.clone().text()).to.equal(200);
          return ((await response.json()) as { data: { asset: { balance: number } } }).data.asset.balance;
        };
        expect(await ask()).to.equal(0); // this server's first ask reads the head: the token is deployed there
        await (await token.getFunction("transfer")(receiver, 7n)).wait();
        now += DEFAULT_HEAD_TTL_MS - 1;
        expect(await ask(), "within the head's TTL: still read at the head before the transfer").to.equal(0);
        now += 1;
        expect(await ask(), "the TTL over: the head is asked again, and the answer read at the new block").to.equal(7);
      } finally {
        await clocked.close();
        provider.destroy();
      }
    });

    it("answers 404 for an address with no contract code or a contract that is not a token", async function () {
      await expectError(await post("/api/ccq-evm", { user_address: sources.evm.holder, contract_address: sources.evm.empty }), 404);
      await expectError(
        await post("/api/ccq-evm", { user_address: sources.evm.holder, contract_address: "0xcA11bde05977b3631167028862bE2a173976CA11" }),
        404,
      );
    });

    it("answers 400 for a wrong checksum, a malformed, missing, extra or mistyped field", async function () {
      const cases: unknown[] = [
        { user_address: `0x${sources.evm.holder.slice(2).replace(/[a-f]/, (c) => c.toUpperCase())}`, contract_address: sources.evm.erc20 },
        { user_address: "0x1234", contract_address: sources.evm.erc20 },
        { user_address: sources.evm.holder },
        { user_address: sources.evm.holder, contract_address: sources.evm.erc20, extra: 1 },
        { user_address: 42, contract_address: sources.evm.erc20 },
        [],
      ];
      const messages = [
        /EIP-55 checksum/,
        /40 hexadecimal digits/,
        /required property 'contract_address'/,
        /additional properties/,
        /must be string/,
        /must be object/,
      ];
      for (const [index, body] of cases.entries()) await expectError(await post("/api/ccq-evm", body), 400, messages[index]);
    });
  });

  describe("ccq-svm", function () {
    it("answers an owner's two SPL accounts summed, with their raw data", async function () {
      const response = await post("/api/ccq-svm", { owner_address: sources.svm.owner, token_mint_address: sources.svm.splMint });
      expect(response.status).to.equal(200);
      const body = (await response.json()) as {
        message: string;
        data: { owner_address: string; asset: { balance: number; QueryResult: string } };
      };
      expect(body.message).to.equal("Assets Fetched Successfully");
      expect(body.data.owner_address).to.equal(sources.svm.owner);
      expect(body.data.asset.balance).to.equal(7_500_000);
      expect(body.data.asset.QueryResult).to.match(/^[0-9a-f]{660}$/);
    });

    it("answers an owner of 1,000 token accounts for one mint: the data of every account", async function () {
      const response = await post("/api/ccq-svm", {
        owner_address: sources.svm.manyAccountsOwner,
        token_mint_address: sources.svm.splMint,
      });
      expect(response.status).to.equal(200);
      const body = (await response.json()) as { data: { asset: { balance: number; QueryResult: string } } };
      expect(body.data.asset.balance).to.equal(Number(MANY_ACCOUNTS_AMOUNT));
      const accounts = body.data.asset.QueryResult.match(/.{330}/g)!;
      expect(accounts).to.have.length(MANY_ACCOUNTS);
      expect(accounts.join("")).to.equal(body.data.asset.QueryResult);
      // Each 165-byte account names the mint and the owner; one holds the amount, the rest are empty.
      const amounts = accounts.map((account) => Buffer.from(account.slice(128, 144), "hex").readBigUInt64LE());
      expect(amounts.filter((amount) => amount !== 0n)).to.deep.equal([MANY_ACCOUNTS_AMOUNT]);
    });

    it("answers a Token-2022 balance above 2^53 exactly, an NFT, and an owner with no account", async function () {
      const t22 = await (await post("/api/ccq-svm", { owner_address: sources.svm.owner, token_mint_address: sources.svm.t22Mint })).text();
      expect(t22).to.include(`"balance":${ABOVE_2_53}`);
      const nft = (await (
        await post("/api/ccq-svm", { owner_address: sources.svm.nftOwner, token_mint_address: sources.svm.nftMint })
      ).json()) as {
        data: { asset: { balance: number } };
      };
      expect(nft.data.asset.balance).to.equal(1);
      const none = (await (
        await post("/api/ccq-svm", { owner_address: sources.svm.emptyOwner, token_mint_address: sources.svm.splMint })
      ).json()) as {
        data: { asset: unknown };
      };
      expect(none.data.asset).to.deep.equal({ balance: 0, QueryResult: "" });
    });

    it("answers 404 for a mint address with no mint account, 400 for base58 that is not 32 bytes", async function () {
      await expectError(await post("/api/ccq-svm", { owner_address: sources.svm.owner, token_mint_address: sources.svm.emptyOwner }), 404);
      await expectError(await post("/api/ccq-svm", { owner_address: sources.svm.owner, token_mint_address: "3yZe7d" }), 400);
      await expectError(await post("/api/ccq-svm", { owner_address: "0OIl", token_mint_address: sources.svm.splMint }), 400);
    });
  });

  describe("keys and request format", function () {
    it("answers 401 for a missing or unknown key before looking at anything else", async function () {
      await expectError(await post("/api/ccq-evm", "{not json", { authorization: "" }), 401, /Missing API key/);
      await expectError(
        await post("/api/ccq-evm", "{not json", { authorization: "avn_unknown", "content-type": "text/xml" }),
        401,
        /Unknown API key/,
      );
    });

    it("checks the key on every spelling of an API path: percent-encoded, absolute-form, odd schemes", async function () {
      const body = { user_address: sources.evm.holder, contract_address: sources.evm.erc20 };
      await expectError(await post("/%61pi/ccq-evm", body, { authorization: "" }), 401, /Missing API key/);
      await expectError(await post("/api/ccq-%65vm", body, { authorization: "" }), 401, /Missing API key/);
      await expectError(await post("/api/ccq-evm", body, { authorization: "Basic dXNlcjpwYXNz" }), 401, /Unknown API key/);
      // Absolute-form request target (`POST http://host/api/ccq-evm`), which fetch cannot send.
      const { port } = new URL(baseUrl);
      const status = await new Promise<number>((resolve, reject) => {
        const request = httpRequest(
          { host: "127.0.0.1", port, method: "POST", path: `${baseUrl}/api/ccq-evm`, headers: { "content-type": "application/json" } },
          (response) => {
            response.resume();
            resolve(response.statusCode ?? 0);
          },
        );
        request.on("error", reject);
        request.end(JSON.stringify(body));
      });
      expect(status).to.equal(401);
    });

    it("answers 400 for a JSON body declared in a charset other than UTF-8", async function () {
      const body = { user_address: sources.evm.holder, contract_address: sources.evm.erc20 };
      await expectError(await post("/api/ccq-evm", body, { "content-type": "application/json; charset=latin1" }), 400, /UTF-8/);
      expect((await post("/api/ccq-evm", body, { "content-type": "application/json; charset=UTF-8" })).status).to.equal(200);
    });

    it("answers 400 for a wrong Content-Type, malformed JSON and an oversized body", async function () {
      await expectError(
        await post("/api/ccq-evm", "user_address=1", { "content-type": "application/x-www-form-urlencoded" }),
        400,
        /Content-Type/,
      );
      await expectError(await post("/api/ccq-evm", "{not json"), 400, /not valid JSON/);
      await expectError(await post("/api/ccq-evm", { user_address: "x".repeat(10_000), contract_address: "y" }), 400, /too large/);
    });

    it("describes both endpoints and their errors in /openapi.json", async function () {
      const spec = (await (await fetch(`${baseUrl}/openapi.json`)).json()) as {
        paths: Record<string, { post: { responses: Record<string, unknown> } }>;
      };
      for (const path of ["/api/ccq-evm", "/api/ccq-svm"]) {
        expect(Object.keys(spec.paths[path].post.responses)).to.include.members(["200", "400", "401", "404", "429", "500"]);
      }
    });
  });
});

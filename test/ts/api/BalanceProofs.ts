import { expect } from "chai";
import { Contract, ContractFactory, getAddress, hexlify, Interface, randomBytes, Wallet, type JsonRpcProvider } from "ethers";
import hre from "hardhat";

import { ATTEST_NOT_SUPPORTED } from "../../../src/api/batch.ts";
import { loadApiConfig, proofL2RpcUrl } from "../../../src/api/config.ts";
import { BLOCK_NUMBER_NEEDS_PROOF } from "../../../src/api/server/chains.ts";
import {
  BALANCE_NOT_A_MAPPING,
  BLOCK_AFTER_KNOWN,
  PROOF_NOT_SUPPORTED_ON_BATCH,
  PROOF_SOURCE_NOT_L1,
  PROOF_WITH_ATTEST,
  PROOFS_NOT_CONFIGURED,
  TOKEN_ID_NOT_PROVABLE,
} from "../../../src/api/server/balance-proof-route.ts";
import { buildBalanceProof } from "../../../src/chains/evm/balance-proof.ts";
import { erc7201Base, type JsonRpc } from "../../../src/chains/evm/balance-slot.ts";
import { JsonRpcPool } from "../../../src/chains/rpc/json-rpc-pool.ts";
import { startAnvil, type AnvilInstance } from "../../../src/devnet/anvil.ts";
import { devAccount } from "../../../src/devnet/accounts.ts";
import { devnetProvider } from "../../../src/devnet/op-devnet.ts";
import { ABOVE_2_53, startSourceFixtures, type SourceFixtures } from "../../../src/devnet/source-chains.ts";
import { opArtifact } from "../../../src/op/artifacts.ts";
import { L2_PREDEPLOYS } from "@avn/protocol/op-predeploys";
import { startTestApi, type TestApi } from "../../helpers/api.ts";

/** The OP depositor account, the only caller L1Block takes new values from. */
const DEPOSITOR = "0xDeaDDEaDDeAdDeAdDEAdDEaddeAddEAdDEAd0001";
const SUPPLY = 10n ** 24n;
const randomOwner = () => getAddress(hexlify(randomBytes(20)));
const word = (value: bigint) => `0x${value.toString(16).padStart(64, "0")}`;

interface ProofData {
  user_address: string;
  asset: { balance: number | bigint; QueryResult: string };
  proof: { blockNumber: number; blockHash: string; anchorBlockNumber?: number; balancesSlot: string; included: boolean; encoded: string };
}

/**
 * `POST /api/ccq-evm?proof=true` on a real server over one anvil that plays both chains: the API's Ethereum
 * source, and the "L2" whose L1Block predeploy (Bedrock's code, set by the depositor) names one of its own
 * blocks, so the proof's block hash is a real block of the source.
 */
describe("API: storage proofs of balances (?proof=true on /api/ccq-evm)", function () {
  this.timeout(180_000);
  let sources: SourceFixtures;
  let otherEthereum: AnvilInstance;
  let provider: JsonRpcProvider;
  let pool: JsonRpcPool;
  /** Every method the API's proof path sent to the Ethereum source, in order. */
  const ethereumCalls: string[] = [];
  let api: TestApi;
  let holder: string;
  let tokens: { erc20: string; erc721: string; proxied: string; namespaced: string; offset: string; computed: string };
  /** The L1 block the L2's L1Block names. */
  let l1Block: { number: bigint; hash: string };

  const deploy = async (deployer: Wallet, name: string, args: unknown[]) => {
    const artifact = await hre.artifacts.readArtifact(name);
    const contract = await new ContractFactory(artifact.abi, artifact.bytecode, deployer).deploy(...args);
    await contract.waitForDeployment();
    return contract.getAddress();
  };
  /**
   * Puts Bedrock's L1Block at its predeploy address and has the depositor set it to the head block of the same
   * chain. The state edits (code, the depositor's gas money) come first and get a block of their own: anvil's
   * `anvil_set*` change the head's state without a new block, and anvil would then prove that block's state
   * against a header that predates the change.
   */
  const setL1Block = async () => {
    await provider.send("anvil_setCode", [L2_PREDEPLOYS.L1Block, opArtifact("L1Block").deployedBytecode]);
    await provider.send("anvil_impersonateAccount", [DEPOSITOR]);
    await provider.send("anvil_setBalance", [DEPOSITOR, "0xde0b6b3a7640000"]);
    await provider.send("evm_mine", []);
    const block = (await provider.getBlock("latest"))!;
    const l1BlockAbi = new Interface(opArtifact("L1Block").abi);
    const depositor = await provider.getSigner(DEPOSITOR);
    const set = await depositor.sendTransaction({
      to: L2_PREDEPLOYS.L1Block,
      data: l1BlockAbi.encodeFunctionData("setL1BlockValues", [
        block.number,
        block.timestamp,
        1n,
        block.hash,
        0n,
        `0x${"00".repeat(32)}`,
        0n,
        0n,
      ]),
    });
    await set.wait();
    await provider.send("anvil_stopImpersonatingAccount", [DEPOSITOR]);
    return { number: BigInt(block.number), hash: block.hash! };
  };

  before(async function () {
    sources = await startSourceFixtures();
    holder = sources.evm.holder;
    provider = devnetProvider(sources.anvil.rpcUrl, 1);
    const deployer = new Wallet(devAccount(0).privateKey, provider);
    const proxy = async (implementationName: string) => {
      const implementation = await deploy(deployer, implementationName, []);
      const artifact = await hre.artifacts.readArtifact(implementationName);
      const data = new Interface(artifact.abi).encodeFunctionData("initialize", [holder, SUPPLY]);
      return deploy(deployer, "StorageProofTokenProxy", [implementation, data]);
    };
    tokens = {
      erc20: sources.evm.erc20,
      erc721: sources.evm.erc721,
      proxied: await proxy("InitializableERC20"),
      namespaced: await proxy("NamespacedERC20"),
      offset: await deploy(deployer, "OffsetBalancesERC20", [holder, SUPPLY]),
      // 100 shares at an index of 2: a balance of 200, and a slot that holds 100.
      computed: await deploy(deployer, "ComputedBalanceToken", [holder, 100n, 2n * 10n ** 18n]),
    };
    l1Block = await setL1Block();
    // After the L1 block: the holder's balance at the head is no longer the one at the L1 block.
    const erc20 = new Contract(
      tokens.erc20,
      ["function transfer(address to, uint256 amount) returns (bool)"],
      new Wallet(devAccount(7).privateKey, provider),
    );
    await (await erc20.transfer(randomOwner(), 1_000n)).wait();

    pool = new JsonRpcPool({ urls: [sources.anvil.rpcUrl], timeoutMs: 5_000, backoffMs: 10 });
    const ethereum: JsonRpc = {
      request: <T>(method: string, params: unknown[]) => {
        ethereumCalls.push(method);
        return pool.request<T>(method, params);
      },
    };
    api = await startTestApi(sources, { proofs: { l2: pool, ethereum } });
    otherEthereum = await startAnvil({ chainId: 1 });
  });
  after(async function () {
    await api?.close();
    await otherEthereum?.stop();
    provider?.destroy();
    await sources?.stop();
  });

  const post = (target: TestApi, path: string, body: unknown) =>
    fetch(`${target.baseUrl}${path}`, {
      method: "POST",
      headers: { authorization: target.apiKey, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const expectError = async (response: Response, status: number, message: string) => {
    const text = await response.text();
    expect(response.status, text).to.equal(status);
    expect(JSON.parse(text)).to.deep.equal({ status, message });
  };
  const prove = (token: string, owner = holder, target = api, query = "?proof=true") =>
    post(target, `/api/ccq-evm${query}`, { user_address: owner, contract_address: token });
  /**
   * A 200 proof answer, checked against the balance at the L1 block (or `blockNumber`, proven through the history
   * contract at the L1 block) and a proof built independently of the API.
   */
  const proved = async (token: string, balancesSlot: bigint, owner = holder, blockNumber?: bigint): Promise<ProofData> => {
    const response =
      blockNumber === undefined
        ? await prove(token, owner)
        : await post(api, "/api/ccq-evm?proof=true", { user_address: owner, contract_address: token, block_number: Number(blockNumber) });
    const text = await response.text();
    expect(response.status, text).to.equal(200);
    const data = (JSON.parse(text) as { data: ProofData }).data;
    // The balance as written (JSON.parse would round it past 2^53).
    data.asset.balance = BigInt(/"balance":(\d+)/.exec(text)![1]);
    const balance = BigInt(
      await provider.call({
        to: token,
        data: new Interface(["function balanceOf(address) view returns (uint256)"]).encodeFunctionData("balanceOf", [owner]),
        blockTag: Number(blockNumber ?? l1Block.number),
      }),
    );
    expect(data.asset.QueryResult).to.equal(word(balance));
    expect(BigInt(data.asset.balance)).to.equal(balance);
    const expected = await buildBalanceProof(pool, {
      token,
      owner,
      balancesSlot,
      blockNumber: blockNumber ?? l1Block.number,
      anchorBlockNumber: l1Block.number,
    });
    expect(data.proof).to.deep.equal({
      blockNumber: Number(blockNumber ?? l1Block.number),
      blockHash: expected.blockHash,
      ...(blockNumber === undefined || blockNumber === l1Block.number ? {} : { anchorBlockNumber: Number(l1Block.number) }),
      balancesSlot: balancesSlot.toString(),
      included: balance !== 0n,
      encoded: expected.encoded,
    });
    expect(expected.value).to.equal(balance);
    return data;
  };

  describe("proofs", function () {
    it("proves an ERC-20 balance at the L1 block the L2 knows (slot 0), not at the head, and writes the exact answer", async function () {
      const response = await prove(tokens.erc20);
      const text = await response.text();
      expect(response.status, text).to.equal(200);
      // The raw text: the balance above 2^53 as an exact integer, then the proof after asset.
      expect(text).to.match(
        new RegExp(
          `^\\{"status":200,"message":"Assets Fetched Successfully","data":\\{"user_address":"${holder}","asset":\\{"balance":${ABOVE_2_53},"QueryResult":"${word(ABOVE_2_53)}"\\},` +
            `"proof":\\{"blockNumber":${l1Block.number},"blockHash":"${l1Block.hash}","balancesSlot":"0","included":true,"encoded":"0x[0-9a-f]+"\\}\\}\\}$`,
        ),
      );
      await proved(tokens.erc20, 0n);
      // The plain answer is at the head, after the transfer made past the L1 block.
      const plain = await (await prove(tokens.erc20, holder, api, "")).text();
      expect(plain).to.include(`"balance":${ABOVE_2_53 - 1_000n},`);
      expect(plain).to.not.include("proof");
    });

    it("proves an ERC-721 holder's count (OpenZeppelin's slot 3)", async function () {
      const data = await proved(tokens.erc721, 3n);
      expect(BigInt(data.asset.balance) > 0n).to.equal(true);
    });

    it("proves a token behind an ERC1967 proxy, from the proxy's storage (slot 0 and the ERC-7201 namespace)", async function () {
      await proved(tokens.proxied, 0n);
      await proved(tokens.namespaced, erc7201Base("openzeppelin.storage.ERC20"));
      expect(erc7201Base("openzeppelin.storage.ERC20")).to.equal(0x52c63247e1f47db19d5ce0460030c497f067ca4cebf71ba98eeadabe20bace00n);
    });

    it("finds a balances mapping that is not at slot 0", async function () {
      await proved(tokens.offset, 2n);
    });

    it("remembers a token's slot: a second owner's proof needs no access list", async function () {
      await proved(tokens.offset, 2n);
      ethereumCalls.length = 0;
      const response = await prove(tokens.offset);
      expect(response.status).to.equal(200);
      expect(ethereumCalls).to.include("eth_getProof");
      expect(ethereumCalls).to.not.include("eth_createAccessList");
    });

    it("proves a zero balance with an exclusion proof (an unwritten slot)", async function () {
      for (const [token, balancesSlot] of [
        [tokens.erc20, 0n],
        [tokens.erc721, 3n],
        [tokens.namespaced, erc7201Base("openzeppelin.storage.ERC20")],
      ] as const) {
        const data = await proved(token, balancesSlot, randomOwner());
        expect([data.asset.balance, data.proof.included]).to.deep.equal([0n, false]);
      }
    });

    it("proves a balance at an earlier block_number (a JSON integer or a decimal string) through EIP-2935's history", async function () {
      const earlier = l1Block.number - 3n;
      const data = await proved(tokens.erc20, 0n, holder, earlier);
      expect(data.proof.anchorBlockNumber).to.equal(Number(l1Block.number));
      const asString = await post(api, "/api/ccq-evm?proof=true", {
        user_address: holder,
        contract_address: tokens.erc20,
        block_number: earlier.toString(),
      });
      expect(((await asString.json()) as { data: ProofData }).data.proof).to.deep.equal(data.proof);
      // The block the L2 knows itself: a plain proof, no history.
      const known = await proved(tokens.erc20, 0n, holder, l1Block.number);
      expect(known.proof.anchorBlockNumber).to.equal(undefined);
    });

    it("refuses a block_number after the L1 block the L2 knows (422), malformed (400), or without ?proof=true (400)", async function () {
      const ask = (block_number: unknown, query = "?proof=true") =>
        post(api, `/api/ccq-evm${query}`, { user_address: holder, contract_address: tokens.erc20, block_number });
      await expectError(await ask(Number(l1Block.number + 1n)), 422, BLOCK_AFTER_KNOWN(l1Block.number + 1n, l1Block.number));
      const malformed = "block_number must be a block number: a non-negative JSON integer or a decimal string of digits only, below 2^64";
      for (const value of [-1, 1.5, "0x10", "12a", "18446744073709551616", 2 ** 60]) {
        await expectError(await ask(value), 400, malformed);
      }
      await expectError(await ask(1, ""), 400, BLOCK_NUMBER_NEEDS_PROOF);
      await expectError(await ask(1, "?attest=true"), 400, BLOCK_NUMBER_NEEDS_PROOF);
      const batch = await post(api, "/api/ccq-evm/batch", [{ user_address: holder, contract_address: tokens.erc20, block_number: 1 }]);
      const { data } = (await batch.json()) as { data: { results: Array<{ status: number; message: string }> } };
      expect(data.results).to.deep.equal([{ status: 400, message: BLOCK_NUMBER_NEEDS_PROOF }]);
    });

    it("checks the proof on-chain with StorageProofVerifier.verifyBalance, which returns the answer's balance", async function () {
      const deployer = new Wallet(devAccount(0).privateKey, provider);
      const hashes = await deploy(deployer, "L1BlockHashes", [L2_PREDEPLOYS.L1Block]);
      const verifierAddress = await deploy(deployer, "StorageProofVerifier", [hashes, L2_PREDEPLOYS.L1Block]);
      const verifier = new Contract(verifierAddress, (await hre.artifacts.readArtifact("StorageProofVerifier")).abi, provider);
      for (const [token, owner] of [
        [tokens.erc20, randomOwner()],
        [tokens.erc20, holder],
        [tokens.erc721, holder],
        [tokens.proxied, holder],
        [tokens.namespaced, holder],
        [tokens.offset, holder],
      ]) {
        const text = await (await prove(token, owner)).text();
        const { data } = JSON.parse(text) as { data: ProofData };
        data.asset.balance = BigInt(/"balance":(\d+)/.exec(text)![1]);
        const [balance, blockNumber] = (await verifier.verifyBalance(
          token,
          owner,
          BigInt(data.proof.balancesSlot),
          3_600n,
          data.proof.encoded,
        )) as [bigint, bigint];
        expect([balance, blockNumber]).to.deep.equal([BigInt(data.asset.balance), l1Block.number]);
      }
      // A history proof: the verifier returns the earlier block's balance and number.
      const earlier = l1Block.number - 3n;
      const data = await proved(tokens.erc20, 0n, holder, earlier);
      const verified = (await verifier.verifyBalance(tokens.erc20, holder, 0n, 3_600n, data.proof.encoded)) as [bigint, bigint];
      expect([...verified]).to.deep.equal([BigInt(data.asset.balance), earlier]);
    });
  });

  describe("refusals", function () {
    it("answers 422 for a token whose balance is computed (shares × index), not a mapping", async function () {
      await expectError(await prove(tokens.computed), 422, BALANCE_NOT_A_MAPPING);
    });

    it("answers 501 when the API's Ethereum source is not the L2's L1 (the block's hash differs there)", async function () {
      const otherProvider = devnetProvider(otherEthereum.rpcUrl, 1);
      // The block number exists on the other chain too: only its hash tells them apart.
      await otherProvider.send("anvil_mine", [`0x${(l1Block.number + 2n).toString(16)}`]);
      otherProvider.destroy();
      const foreign = new JsonRpcPool({ urls: [otherEthereum.rpcUrl], timeoutMs: 5_000 });
      const other = await startTestApi(sources, { evmUrls: [otherEthereum.rpcUrl], proofs: { l2: pool, ethereum: foreign } });
      try {
        await expectError(await prove(tokens.erc20, holder, other), 501, PROOF_SOURCE_NOT_L1);
      } finally {
        await other.close();
      }
    });

    it("answers 501 without an L2 configured, and still 400 for a request that is wrong anyway", async function () {
      const bare = await startTestApi(sources);
      try {
        await expectError(await prove(tokens.erc20, holder, bare), 501, PROOFS_NOT_CONFIGURED);
        await expectError(await prove(tokens.erc20, holder, bare, "?proof=true&attest=true"), 400, PROOF_WITH_ATTEST);
      } finally {
        await bare.close();
      }
    });

    it("answers 400 for proof with attest, with token_id, and on batches", async function () {
      await expectError(await prove(tokens.erc20, holder, api, "?proof=true&attest=true"), 400, PROOF_WITH_ATTEST);
      await expectError(
        await post(api, "/api/ccq-evm?proof=true", { user_address: holder, contract_address: sources.evm.erc1155, token_id: "1" }),
        400,
        TOKEN_ID_NOT_PROVABLE,
      );
      const batch = [{ user_address: holder, contract_address: tokens.erc20 }];
      await expectError(await post(api, "/api/ccq-evm/batch?proof=true", batch), 400, PROOF_NOT_SUPPORTED_ON_BATCH);
      await expectError(await post(api, "/api/ccq-evm/batch?proof=true&attest=true", batch), 400, ATTEST_NOT_SUPPORTED);
      await expectError(
        await prove(tokens.erc20, holder, api, "?proof=yes"),
        400,
        "Invalid request: querystring/proof must be equal to one of the allowed values",
      );
    });
  });

  describe("configuration and documentation", function () {
    it("takes the L2 from PROOF_L2_RPC_URL, else ATTESTATION_L2_RPC_URL, else none", function () {
      const base = { EVM_RPC_URLS: "http://127.0.0.1:1", SOLANA_RPC_URLS: "http://127.0.0.1:2" };
      expect(proofL2RpcUrl(loadApiConfig(base))).to.equal(undefined);
      expect(proofL2RpcUrl(loadApiConfig({ ...base, PROOF_L2_RPC_URL: "http://127.0.0.1:3" }))).to.equal("http://127.0.0.1:3");
      // Only the L2 RPC URL of the hub's four: the hub's configuration check refuses it alone.
      expect(() => loadApiConfig({ ...base, ATTESTATION_L2_RPC_URL: "http://127.0.0.1:4" })).to.throw(/ATTESTATION_L2_WS_URL/);
    });

    it("documents ?proof=true and data.proof on /api/ccq-evm in /openapi.json, and not on ccq-svm", async function () {
      type Operation = {
        parameters?: { name: string; in: string }[];
        responses: Record<string, { content?: { "application/json": { schema: { properties: { data: { properties: object } } } } } }>;
      };
      const spec = (await (await fetch(`${api.baseUrl}/openapi.json`)).json()) as { paths: Record<string, { post: Operation }> };
      const query = (path: string) => (spec.paths[path].post.parameters ?? []).filter((p) => p.in === "query").map((p) => p.name);
      const data = (path: string) => spec.paths[path].post.responses[200].content!["application/json"].schema.properties.data.properties;
      expect(query("/api/ccq-evm")).to.include("proof");
      expect(data("/api/ccq-evm")).to.have.property("proof");
      expect(spec.paths["/api/ccq-evm"].post.responses).to.have.property("422");
      expect(query("/api/ccq-svm")).to.not.include("proof");
      expect(data("/api/ccq-svm")).to.not.have.property("proof");
    });
  });

  describe("price", function () {
    it("takes ATTEST_COST tokens for a proof (configured), one for a plain answer, one for a proof the server cannot give", async function () {
      const remaining = (response: Response) => Number(response.headers.get("ratelimit-remaining"));
      const priced = await startTestApi(sources, {
        policy: { capacity: 100, refillPerSecond: 0.001 },
        attestCost: 7,
        proofs: { l2: pool, ethereum: pool },
      });
      const unpriced = await startTestApi(sources, { policy: { capacity: 100, refillPerSecond: 0.001 }, attestCost: 7 });
      try {
        const first = remaining(await prove(tokens.erc20, holder, priced, ""));
        expect(remaining(await prove(tokens.erc20, holder, priced))).to.equal(first - 7);
        const second = remaining(await prove(tokens.erc20, holder, unpriced, ""));
        expect(remaining(await prove(tokens.erc20, holder, unpriced))).to.equal(second - 1);
      } finally {
        await priced.close();
        await unpriced.close();
      }
    });
  });
});

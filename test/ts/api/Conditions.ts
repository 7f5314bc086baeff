import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

import { conditionHash, linkMessage, ownersHash, type ConditionAttestation } from "@avn/protocol/conditions";
import { generateKeyPairSigner, getBase58Decoder, signBytes, type Address, type KeyPairSigner } from "@solana/kit";
import { expect } from "chai";
import fc from "fast-check";
import { ContractFactory, getAddress, NonceManager, Wallet } from "ethers";
import hre from "hardhat";

import { linkChainId, loadApiConfig } from "../../../src/api/config.ts";
import { ApiKeys } from "../../../src/api/keys/api-keys.ts";
import { startApi } from "../../../src/api/main.ts";
import { LINK_CHAIN_UNKNOWN } from "../../../src/api/server/conditions-route.ts";
import { UsageStore } from "../../../src/api/usage/usage-store.ts";
import { devAccount } from "../../../src/devnet/accounts.ts";
import { startAnvil, type AnvilInstance } from "../../../src/devnet/anvil.ts";
import { ABOVE_2_53, ERC721_TOKENS_HELD } from "../../../src/devnet/demo-holdings.ts";
import { installMulticall3 } from "../../../src/devnet/op/l2.ts";
import { devnetProvider } from "../../../src/devnet/op-devnet.ts";
import { startSolanaRpcServer, type SolanaRpcServer } from "../../../src/devnet/solana/litesvm-rpc-server.ts";
import { SolanaTokenLedger } from "../../../src/devnet/solana/token-ledger.ts";
import type { SourceFixtures } from "../../../src/devnet/source-chains.ts";
import { attestationFromJson, recoverAttestationSigner } from "../../../src/common/attestation.ts";
import { conditionKind, type ConditionMessage } from "@avn/protocol/attestation-kinds";
import { startTestApi, type TestApi } from "../../helpers/api.ts";
import {
  connectNode,
  honestConditionSigner,
  honestSigner,
  L2_CHAIN_ID,
  startAttestationL2,
  startHubApi,
  until,
  type AttestationL2,
} from "../attestation/fixture.ts";

/** The L2 chain id the link messages of these tests name. */
const LINK_CHAIN_ID = 901n;
/** An ERC-1155 id and amount both above 2^53: a float would round either. */
const ERC1155_ID = 2n ** 64n + 7n;
const ERC1155_AMOUNT = 2n ** 60n + 3n;
const SPL_AMOUNT = 7_500_000n;

/**
 * The source chains of these tests: the demo ERC-20 / ERC-721 and an ERC-1155 on anvil for one owner, and
 * on LiteSVM an owner whose key the tests hold (it signs the link), with SPL, Token-2022 and an NFT.
 */
interface ConditionSources {
  anvil: AnvilInstance;
  solanaRpc: SolanaRpcServer;
  ethereum: { owner: string; erc20: string; erc721: string; erc1155: string; noCode: string };
  solana: { owner: KeyPairSigner; splMint: Address; t22Mint: Address; nftMint: Address; unheldMint: Address };
  stop(): Promise<void>;
}

async function startConditionSources(): Promise<ConditionSources> {
  const anvil = await startAnvil({ chainId: 1, disableCodeSizeLimit: hre.globalOptions.coverage });
  const provider = devnetProvider(anvil.rpcUrl, 1);
  await installMulticall3(provider);
  const deployer = new NonceManager(new Wallet(devAccount(0).privateKey, provider));
  const deploy = async (name: string, args: unknown[]) => {
    const artifact = await hre.artifacts.readArtifact(name);
    const contract = await new ContractFactory(artifact.abi, artifact.bytecode, deployer).deploy(...args);
    await contract.waitForDeployment();
    return contract.getAddress();
  };
  const owner = devAccount(7).address;
  const ethereum = {
    owner,
    erc20: await deploy("PlainERC20", [owner, ABOVE_2_53]),
    erc721: await deploy("PlainERC721", [owner, ERC721_TOKENS_HELD]),
    erc1155: await deploy("PlainERC1155", [owner, [ERC1155_ID], [ERC1155_AMOUNT]]),
    noCode: devAccount(8).address,
  };
  provider.destroy();

  const ledger = await SolanaTokenLedger.create();
  const solanaRpc = await startSolanaRpcServer(ledger);
  const solanaOwner = await ledger.newWallet();
  const splMint = await ledger.createMint("spl", 6);
  await ledger.mintTo(splMint, await ledger.associatedAccount(solanaOwner.address, splMint), SPL_AMOUNT);
  const t22Mint = await ledger.createMint("token-2022", 9);
  await ledger.mintTo(t22Mint, await ledger.associatedAccount(solanaOwner.address, t22Mint), ABOVE_2_53);
  const { mint: nftMint } = await ledger.createNft(solanaOwner.address);
  const unheldMint = await ledger.createMint("spl", 0);
  return {
    anvil,
    solanaRpc,
    ethereum,
    solana: { owner: solanaOwner, splMint, t22Mint, nftMint, unheldMint },
    async stop() {
      await solanaRpc.close();
      await anvil.stop();
    },
  };
}

/** `signer`'s base58 ed25519 signature of `text`'s UTF-8 bytes, as a wallet's signMessage gives it. */
async function signText(signer: KeyPairSigner, text: string): Promise<string> {
  return getBase58Decoder().decode(await signBytes(signer.keyPair.privateKey, new TextEncoder().encode(text)));
}

interface ConditionAnswer {
  status: number;
  message: string;
  data: {
    verdict: boolean;
    conditionHash: string;
    ownersHash: string;
    sourceBlocks: { ethereum?: number; solana?: number };
    leaves?: Array<Record<string, unknown> & { holds: boolean }>;
    attestation?: unknown;
  };
}

describe("API: POST /api/conditions on a real server", function () {
  this.timeout(120_000);
  let sources: ConditionSources;
  let api: TestApi;
  /** The same API without an L2 chain id: requests naming both owners answer 501. */
  let unlinkedApi: TestApi;
  let link: string;

  before(async function () {
    sources = await startConditionSources();
    api = await startTestApi(sources, { linkChainId: LINK_CHAIN_ID });
    unlinkedApi = await startTestApi(sources);
    link = await signText(sources.solana.owner, linkMessage(sources.ethereum.owner, LINK_CHAIN_ID));
  });
  after(async function () {
    await unlinkedApi?.close();
    await api?.close();
    await sources?.stop();
  });

  const post = (body: unknown, options: { api?: TestApi; query?: string; headers?: Record<string, string> } = {}) => {
    const target = options.api ?? api;
    return fetch(`${target.baseUrl}/api/conditions${options.query ?? ""}`, {
      method: "POST",
      headers: { authorization: target.apiKey, "content-type": "application/json", ...options.headers },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
  };
  /** Both owners with their link, and `condition`. */
  const both = (condition: unknown, extra: Record<string, unknown> = {}) => ({
    owners: { ethereum: sources.ethereum.owner, solana: sources.solana.owner.address },
    condition,
    links: { solana: link },
    ...extra,
  });
  /** The 200 answer's raw text and its parse (integers above 2^53 are checked in the text). */
  const evaluate = async (body: unknown, options: Parameters<typeof post>[1] = {}) => {
    const response = await post(body, options);
    const text = await response.text();
    expect(response.status, text).to.equal(200);
    return { text, answer: JSON.parse(text) as ConditionAnswer };
  };
  const verdictOf = async (condition: unknown) => (await evaluate(both(condition))).answer.data.verdict;
  const expectError = async (response: Response, status: number, message: string) => {
    expect(await response.json()).to.deep.equal({ status, message });
    expect(response.status).to.equal(status);
  };

  const erc20 = (bounds: { min?: string; max?: string } = {}) => ({
    chain: "ethereum",
    contract_address: sources.ethereum.erc20,
    ...bounds,
  });
  const erc721 = (bounds: { min?: string; max?: string } = {}) => ({
    chain: "ethereum",
    contract_address: sources.ethereum.erc721,
    ...bounds,
  });
  const spl = (bounds: { min?: string; max?: string } = {}) => ({ chain: "solana", token_mint_address: sources.solana.splMint, ...bounds });
  const t22 = (bounds: { min?: string; max?: string } = {}) => ({ chain: "solana", token_mint_address: sources.solana.t22Mint, ...bounds });
  const nft = (bounds: { min?: string; max?: string } = {}) => ({ chain: "solana", token_mint_address: sources.solana.nftMint, ...bounds });
  const unheld = () => ({ chain: "solana", token_mint_address: sources.solana.unheldMint });

  describe("verdicts over real holdings", function () {
    /** Leaves that hold, and leaves that do not, over both chains. */
    const holding = () => [
      erc20({ min: String(ABOVE_2_53) }),
      spl({ min: "7500000", max: "7500000" }),
      nft({ max: "1" }),
      erc721({ min: "3" }),
    ];
    const lacking = () => [erc20({ min: String(ABOVE_2_53 + 1n) }), spl({ max: "7499999" }), unheld(), erc721({ min: "4" })];

    it("reads each leaf: every holding leaf holds, no lacking leaf does, in order of appearance", async function () {
      const { answer } = await evaluate(both({ any: [...holding(), ...lacking()] }));
      expect(answer.status).to.equal(200);
      expect(answer.message).to.equal("Condition Evaluated");
      expect(answer.data.leaves!.map((leaf) => leaf.holds)).to.deep.equal([true, true, true, true, false, false, false, false]);
      expect(answer.data.leaves!.map((leaf) => leaf.contract_address ?? leaf.token_mint_address)).to.deep.equal([
        sources.ethereum.erc20.toLowerCase(),
        sources.solana.splMint,
        sources.solana.nftMint,
        sources.ethereum.erc721.toLowerCase(),
        sources.ethereum.erc20.toLowerCase(),
        sources.solana.splMint,
        sources.solana.unheldMint,
        sources.ethereum.erc721.toLowerCase(),
      ]);
    });

    it("all: true only when every child holds", async function () {
      expect(await verdictOf({ all: holding() })).to.equal(true);
      for (const lack of lacking()) expect(await verdictOf({ all: [...holding(), lack] })).to.equal(false);
    });

    it("any: true when one child holds", async function () {
      expect(await verdictOf({ any: lacking() })).to.equal(false);
      for (const hold of holding()) expect(await verdictOf({ any: [...lacking(), hold] })).to.equal(true);
    });

    it("atLeast: true when at least n children hold", async function () {
      const [yes1, yes2] = holding();
      const [no1, no2] = lacking();
      const of = [yes1, no1, yes2, no2];
      expect(await verdictOf({ atLeast: 1, of })).to.equal(true);
      expect(await verdictOf({ atLeast: 2, of })).to.equal(true);
      expect(await verdictOf({ atLeast: 3, of })).to.equal(false);
      expect(await verdictOf({ atLeast: 4, of })).to.equal(false);
    });

    it("not: the opposite of its child; combinators nest four deep, leaves below them", async function () {
      expect(await verdictOf({ not: lacking()[0] })).to.equal(true);
      expect(await verdictOf({ not: holding()[0] })).to.equal(false);
      expect(await verdictOf({ not: { not: { not: { not: holding()[1] } } } })).to.equal(true);
      expect(await verdictOf({ not: { not: { not: { not: lacking()[1] } } } })).to.equal(false);
      // A game's question: the NFT and 3 ERC-721s, or at least two of (ERC-20, SPL, not the unheld mint).
      const game = {
        any: [
          { all: [nft(), erc721({ min: String(ERC721_TOKENS_HELD) })] },
          { atLeast: 2, of: [erc20({ min: "1000" }), spl({ min: "8000000" }), { not: unheld() }] },
        ],
      };
      expect(await verdictOf(game)).to.equal(true);
      expect(await verdictOf({ all: [{ not: game.any[0] }, game.any[1]] })).to.equal(false);
    });

    it("min and max are inclusive, exact above 2^53 on both chains; an absent min is 1", async function () {
      const B = ABOVE_2_53;
      const cases: Array<[object, boolean]> = [
        [erc20({ min: String(B) }), true],
        [erc20({ min: String(B + 1n) }), false],
        [erc20({ max: String(B) }), true],
        [erc20({ max: String(B - 1n) }), false],
        [erc20({ min: String(B), max: String(B) }), true],
        [t22({ min: String(B), max: String(B) }), true],
        [t22({ min: String(B + 1n) }), false],
        [t22({ max: String(B - 1n) }), false],
        [spl({ min: "0", max: "0" }), false],
        [unheld(), false], // default min 1: holding nothing does not hold
        [{ ...unheld(), min: "0", max: "0" }, true],
        [nft({ min: "1", max: "1" }), true],
        [erc721({ min: "3", max: "3" }), true],
        [erc721({ min: "2", max: "2" }), false],
        [erc20({ min: "0" }), true],
        [{ chain: "ethereum", contract_address: sources.ethereum.erc20, min: "0", max: "0" }, false],
      ];
      expect(cases).to.have.length(16); // the most leaves a condition may have
      const { answer } = await evaluate(both({ any: cases.map(([leaf]) => leaf) }));
      expect(answer.data.leaves!.map((leaf) => leaf.holds)).to.deep.equal(cases.map(([, holds]) => holds));
    });

    it("writes each leaf in its normal form with its raw balance and QueryResult, exactly above 2^53", async function () {
      const { text, answer } = await evaluate(
        both({
          all: [{ ...erc20(), contract_address: sources.ethereum.erc20.toUpperCase().replace("0X", "0x") }, t22({ min: "007" }), unheld()],
        }),
      );
      const erc20Word = ABOVE_2_53.toString(16).padStart(64, "0");
      expect(text).to.include(
        `{"chain":"ethereum","contract_address":"${sources.ethereum.erc20.toLowerCase()}","min":"1","balance":${ABOVE_2_53},"QueryResult":"0x${erc20Word}","holds":true}`,
      );
      expect(text).to.include(
        `{"chain":"solana","token_mint_address":"${sources.solana.t22Mint}","min":"7","balance":${ABOVE_2_53},"QueryResult":"`,
      );
      expect(text).to.include(
        `{"chain":"solana","token_mint_address":"${sources.solana.unheldMint}","min":"1","balance":0,"QueryResult":"","holds":false}`,
      );
      // A Token-2022 account of the owner: 165 bytes or more, its amount (u64 LE at 64) the balance.
      const t22Data = answer.data.leaves![1].QueryResult as string;
      expect(t22Data).to.match(/^([0-9a-f]{2}){165,}$/);
      expect(Buffer.from(t22Data.slice(128, 144), "hex").readBigUInt64LE()).to.equal(ABOVE_2_53);
      expect(answer.data.verdict).to.equal(false);
    });

    it("reads an ERC-1155 leaf with an id and an amount above 2^53 exactly", async function () {
      const leaf = (tokenId: string, bounds: { min?: string; max?: string }) => ({
        chain: "ethereum",
        contract_address: sources.ethereum.erc1155,
        token_id: tokenId,
        ...bounds,
      });
      const amount = String(ERC1155_AMOUNT);
      const { text, answer } = await evaluate({
        owners: { ethereum: sources.ethereum.owner },
        condition: {
          any: [
            leaf(`000${ERC1155_ID}`, { min: amount, max: amount }),
            leaf(String(ERC1155_ID), { min: String(ERC1155_AMOUNT + 1n) }),
            leaf(String(ERC1155_ID), { max: String(ERC1155_AMOUNT - 1n) }),
            leaf(String(ERC1155_ID + 1n), { min: "0", max: "0" }), // another id: none held
            leaf(String(ERC1155_ID - 1n), {}),
          ],
        },
      });
      const word = `0x${ERC1155_AMOUNT.toString(16).padStart(64, "0")}`;
      expect(text).to.include(
        `{"chain":"ethereum","contract_address":"${sources.ethereum.erc1155.toLowerCase()}","token_id":"${ERC1155_ID}","min":"${amount}","max":"${amount}","balance":${amount},"QueryResult":"${word}","holds":true}`,
      );
      expect(answer.data.leaves!.map((entry) => entry.holds)).to.deep.equal([true, false, false, true, false]);
      expect(answer.data.leaves![3]).to.include({ token_id: String(ERC1155_ID + 1n), balance: 0, QueryResult: `0x${"0".repeat(64)}` });
      expect(answer.data.verdict).to.equal(true);
    });
  });

  describe("positions, hashes and reveal", function () {
    it("states the block and slot it read, only for the chains the condition reads", async function () {
      const rpc = async (url: string, method: string) => {
        const response = await fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: [] }),
        });
        return BigInt(((await response.json()) as { result: string | number }).result);
      };
      const block = await rpc(sources.anvil.rpcUrl, "eth_blockNumber");
      const slot = await rpc(sources.solanaRpc.url, "getSlot");
      const ethereumOnly = await evaluate({ owners: { ethereum: sources.ethereum.owner }, condition: erc20() });
      expect(ethereumOnly.answer.data.sourceBlocks).to.deep.equal({ ethereum: Number(block) });
      const solanaOnly = await evaluate({ owners: { solana: sources.solana.owner.address }, condition: spl() });
      expect(solanaOnly.answer.data.sourceBlocks).to.deep.equal({ solana: Number(slot) });
      const mixed = await evaluate(both({ all: [erc20(), spl()] }));
      expect(mixed.answer.data.sourceBlocks).to.deep.equal({ ethereum: Number(block), solana: Number(slot) });
      expect(mixed.text).to.include(`"sourceBlocks":{"ethereum":${block},"solana":${slot}}`);
    });

    it("reveal: false leaves out the leaves, and only them", async function () {
      const condition = { atLeast: 1, of: [erc20(), spl({ max: "1" })] };
      const shown = await evaluate(both(condition));
      const hidden = await evaluate(both(condition, { reveal: false }));
      const explicit = await evaluate(both(condition, { reveal: true }));
      expect(hidden.text).to.not.include('"leaves"');
      expect(hidden.text).to.not.include(String(ABOVE_2_53));
      expect(hidden.answer.data).to.have.keys(["verdict", "conditionHash", "ownersHash", "sourceBlocks"]);
      const { leaves, ...rest } = shown.answer.data;
      expect(leaves).to.have.length(2);
      expect(hidden.answer.data).to.deep.equal(rest);
      expect(explicit.text).to.equal(shown.text);
    });

    it("conditionHash is the protocol's conditionHash, the same for reordered keys, other address case and leading zeros", async function () {
      const condition = { atLeast: 1, of: [erc20({ min: "5", max: "10" }), spl({ min: "2" }), { not: nft() }] };
      const respelled = {
        of: [
          { max: "010", min: "0005", contract_address: getAddress(sources.ethereum.erc20), chain: "ethereum" },
          { min: "2", token_mint_address: sources.solana.splMint, chain: "solana" },
          { not: { token_mint_address: sources.solana.nftMint, chain: "solana", min: "1" } },
        ],
        atLeast: 1,
      };
      const first = await evaluate(both(condition));
      const second = await evaluate({
        reveal: true,
        links: { solana: link },
        condition: respelled,
        owners: { solana: sources.solana.owner.address, ethereum: sources.ethereum.owner.toLowerCase() },
      });
      expect(first.answer.data.conditionHash)
        .to.equal(conditionHash(condition))
        .and.match(/^0x[0-9a-f]{64}$/);
      expect(second.answer.data.conditionHash).to.equal(first.answer.data.conditionHash);
      const owners = { ethereum: sources.ethereum.owner, solana: sources.solana.owner.address };
      expect(first.answer.data.ownersHash).to.equal(ownersHash(owners));
      expect(second.answer.data.ownersHash).to.equal(first.answer.data.ownersHash);
      // Another bound, another hash; one owner, another owners hash.
      const other = await evaluate(both({ ...condition, atLeast: 2 }));
      expect(other.answer.data.conditionHash).to.not.equal(first.answer.data.conditionHash);
      const alone = await evaluate({ owners: { ethereum: sources.ethereum.owner }, condition: erc20() });
      expect(alone.answer.data.ownersHash)
        .to.equal(ownersHash({ ethereum: sources.ethereum.owner }))
        .and.not.equal(ownersHash(owners));
    });
  });

  describe("the Solana owner's link", function () {
    const expected = () =>
      `links.solana is not the Solana owner's signature of the link message: owners.solana must sign (ed25519, UTF-8 bytes) exactly ` +
      `"Asset Verification Network: link ${getAddress(sources.ethereum.owner)} on chain ${LINK_CHAIN_ID}"`;

    it("accepts the Solana owner's signature of the link message for this L2, whatever the Ethereum owner's case", async function () {
      const owners = { ethereum: sources.ethereum.owner.toLowerCase(), solana: sources.solana.owner.address };
      const { answer } = await evaluate({ owners, condition: { all: [erc20(), spl()] }, links: { solana: link } });
      expect(answer.data.verdict).to.equal(true);
    });

    it("answers 400 quoting the text to sign for another text, another key, another chain id", async function () {
      const stranger = await generateKeyPairSigner();
      const signatures = [
        await signText(sources.solana.owner, linkMessage(sources.ethereum.noCode, LINK_CHAIN_ID)), // another Ethereum owner
        await signText(sources.solana.owner, `${linkMessage(sources.ethereum.owner, LINK_CHAIN_ID)}.`), // another text
        await signText(stranger, linkMessage(sources.ethereum.owner, LINK_CHAIN_ID)), // another key
        await signText(sources.solana.owner, linkMessage(sources.ethereum.owner, LINK_CHAIN_ID + 1n)), // another L2
      ];
      for (const signature of signatures) {
        await expectError(await post(both({ all: [erc20(), spl()] }, { links: { solana: signature } })), 400, expected());
      }
    });

    it("answers 501 for both owners on a server without an L2 chain id; one owner is answered there", async function () {
      await expectError(await post(both({ all: [erc20(), spl()] }), { api: unlinkedApi }), 501, LINK_CHAIN_UNKNOWN);
      expect(LINK_CHAIN_UNKNOWN).to.include("L2_CHAIN_ID");
      // A malformed request is still a 400 there: the request is wrong whatever the server offers.
      const malformed = both({ all: [erc20({ min: "x" }), spl()] });
      await expectError(await post(malformed, { api: unlinkedApi }), 400, "condition.all[0].min must be a decimal string (digits only)");
      const alone = await evaluate({ owners: { solana: sources.solana.owner.address }, condition: spl() }, { api: unlinkedApi });
      expect(alone.answer.data.verdict).to.equal(true);
    });
  });

  describe("refusals", function () {
    const leaves = (count: number) => Array.from({ length: count }, () => erc20());

    it("answers 400 naming the offending path for every malformed part", async function () {
      const ethOnly = (condition: unknown, extra: Record<string, unknown> = {}) => ({
        owners: { ethereum: sources.ethereum.owner },
        condition,
        ...extra,
      });
      const badChecksum = `0x${getAddress(sources.ethereum.erc20)
        .slice(2)
        .replace(/[a-f]/, (c) => c.toUpperCase())}`;
      const cases: Array<[body: unknown, path: string, problem: string]> = [
        // Malformed fields, nested.
        [
          both({ all: [erc20(), { atLeast: 1, of: [erc20({ min: "1.5" })] }] }),
          "condition.all[1].of[0].min",
          "must be a decimal string (digits only)",
        ],
        [both({ any: [spl(), { not: { ...spl(), max: 5 } }] }), "condition.any[1].not.max", "must be a decimal string (digits only)"],
        [both({ any: [spl(), { not: spl({ min: "-1" }) }] }), "condition.any[1].not.min", "must be a decimal string (digits only)"],
        [
          ethOnly({ all: [{ ...erc20(), token_id: "1".repeat(79) }] }),
          "condition.all[0].token_id",
          "must be a decimal string (digits only)",
        ],
        [ethOnly({ all: [{ ...erc20(), token_id: String(2n ** 256n) }] }), "condition.all[0].token_id", "must be below 2^256"],
        [ethOnly({ all: [{ ...erc20(), token_id: 5 }] }), "condition.all[0].token_id", "must be a decimal string (digits only)"],
        [
          ethOnly({ all: [{ ...erc20(), contract_address: "0x1234" }] }),
          "condition.all[0].contract_address",
          "must be 0x followed by 40 hexadecimal digits",
        ],
        [ethOnly({ ...erc20(), contract_address: badChecksum }), "condition.contract_address", "has an invalid EIP-55 checksum"],
        [
          both({ atLeast: 1, of: [erc20(), { ...spl(), token_mint_address: "0OIl" }] }),
          "condition.of[1].token_mint_address",
          "must be a base58 Solana address of 32 bytes",
        ],
        [ethOnly({ all: [{ ...erc20(), chain: "bitcoin" }] }), "condition.all[0].chain", 'must be "ethereum" or "solana"'],
        [ethOnly({ all: ["erc20"] }), "condition.all[0]", "must be an object"],
        [ethOnly([erc20()]), "condition", "must be an object"],
        [ethOnly({ some: [erc20()] }), "condition", 'must be a leaf (with "chain") or one of {"all"}, {"any"}, {"atLeast", "of"}, {"not"}'],
        [{ owners: { ethereum: "0x1234" }, condition: erc20() }, "owners.ethereum", "must be 0x followed by 40 hexadecimal digits"],
        [{ owners: { solana: "0OIl" }, condition: spl() }, "owners.solana", "must be a base58 Solana address of 32 bytes"],
        [{ owners: sources.ethereum.owner, condition: erc20() }, "owners", "must be an object"],
        // Unknown fields, at every level.
        [ethOnly(erc20(), { extra: 1 }), "extra", "is not a known field"],
        [{ owners: { ethereum: sources.ethereum.owner, bitcoin: "x" }, condition: erc20() }, "owners.bitcoin", "is not a known field"],
        [ethOnly({ all: [erc20(), { ...erc20(), amount: "1" }] }), "condition.all[1].amount", "is not a known field"],
        [both({ all: [spl({ min: "1" }), { ...spl(), token_id: "1" }] }), "condition.all[1].token_id", "is not a known field"],
        [ethOnly({ all: [erc20()], not: erc20() }), "condition.not", "is not a known field"],
        [both(erc20(), { links: { solana: link, ethereum: "x" } }), "links.ethereum", "is not a known field"],
        // Empty lists, atLeast out of range, max below min.
        [ethOnly({ all: [] }), "condition.all", "must be a non-empty array of conditions"],
        [ethOnly({ any: [{ atLeast: 1, of: [] }] }), "condition.any[0].of", "must be a non-empty array of conditions"],
        [ethOnly({ any: erc20() }), "condition.any", "must be a non-empty array of conditions"],
        [ethOnly({ atLeast: 0, of: [erc20(), erc20()] }), "condition.atLeast", "must be an integer from 1 to 2 (the length of of)"],
        [ethOnly({ atLeast: 3, of: [erc20(), erc20()] }), "condition.atLeast", "must be an integer from 1 to 2 (the length of of)"],
        [ethOnly({ atLeast: 1.5, of: [erc20(), erc20()] }), "condition.atLeast", "must be an integer from 1 to 2 (the length of of)"],
        [ethOnly({ atLeast: "1", of: [erc20(), erc20()] }), "condition.atLeast", "must be an integer from 1 to 2 (the length of of)"],
        [ethOnly({ of: [erc20()] }), "condition.atLeast", "must be an integer from 1 to 1 (the length of of)"],
        [ethOnly({ all: [erc20({ min: "10", max: "9" })] }), "condition.all[0].max", "must not be below min (10)"],
        [ethOnly(erc20({ max: "0" })), "condition.max", "must not be below min (1)"], // min defaults to 1
        // Size and depth.
        [ethOnly({ all: leaves(17) }), "condition.all", "has 17 entries; at most 16 leaves are allowed"],
        [ethOnly({ all: [{ all: leaves(8) }, { any: leaves(9) }] }), "condition", "has 17 leaves; at most 16 are allowed"],
        [
          ethOnly({ not: { not: { not: { not: { all: [erc20()] } } } } }),
          "condition.not.not.not.not",
          "is a combinator below 4 others; conditions nest at most 4 deep",
        ],
        [
          ethOnly({ all: [{ any: [{ atLeast: 1, of: [{ not: { not: erc20() } }] }] }] }),
          "condition.all[0].any[0].of[0].not",
          "is a combinator below 4 others; conditions nest at most 4 deep",
        ],
        // Owners and links.
        [ethOnly({ all: [erc20(), spl()] }), "condition.all[1]", "is a solana leaf, but owners.solana is not given"],
        [
          { owners: { solana: sources.solana.owner.address }, condition: { not: erc20() } },
          "condition.not",
          "is an ethereum leaf, but owners.ethereum is not given",
        ],
        [{ owners: {}, condition: erc20() }, "owners", "must name an ethereum or a solana owner"],
        [{ condition: erc20() }, "owners", "must name an ethereum or a solana owner"],
        [{ owners: { ethereum: sources.ethereum.owner } }, "condition", "is required"],
        [
          { owners: { ethereum: sources.ethereum.owner, solana: sources.solana.owner.address }, condition: erc20() },
          "links.solana",
          "must be the Solana owner's base58 ed25519 signature of the link message",
        ],
        [
          both(erc20(), { links: { solana: "3yZe7d" } }),
          "links.solana",
          "must be the Solana owner's base58 ed25519 signature of the link message",
        ],
        [both(erc20(), { links: {} }), "links.solana", "must be the Solana owner's base58 ed25519 signature of the link message"],
        [both(erc20(), { links: link }), "links", "must be an object"],
        [ethOnly(erc20(), { links: { solana: link } }), "links", "are for requests that name both an ethereum and a solana owner"],
        // reveal.
        [ethOnly(erc20(), { reveal: "false" }), "reveal", "must be true or false"],
        [ethOnly(erc20(), { reveal: 0 }), "reveal", "must be true or false"],
      ];
      for (const [body, pathName, problem] of cases) {
        const response = await post(body);
        const answer = (await response.json()) as { status: number; message: string };
        expect(response.status, JSON.stringify(body)).to.equal(400);
        expect(answer.message.startsWith(`${pathName} `), answer.message).to.equal(true);
        expect(answer).to.deep.equal({ status: 400, message: `${pathName} ${problem}` });
      }
    });

    it("answers 400 for a body that is not a JSON object, malformed JSON, a wrong Content-Type or an oversized body", async function () {
      await expectError(await post([]), 400, "Invalid request: body must be object");
      await expectError(await post("null"), 400, "Invalid request: body must be object");
      await expectError(await post("{not json"), 400, "The request body is not valid JSON");
      await expectError(
        await post("owners=1", { headers: { "content-type": "text/plain" } }),
        400,
        "Content-Type must be application/json",
      );
      // The route's own limit (CONDITIONS_BODY_LIMIT_BYTES, 16 KiB), not the balance routes' 4 KiB.
      await expectError(
        await post({ owners: { ethereum: sources.ethereum.owner }, condition: { any: leaves(250) } }),
        400,
        "The request body is too large",
      );
    });

    it("takes the largest valid condition, indented: 16 ERC-1155 leaves with 78-digit ids and bounds, four deep, both owners linked", async function () {
      const huge = "9".repeat(77);
      const leaf = { chain: "ethereum", contract_address: sources.ethereum.erc20, token_id: huge, min: huge, max: huge };
      const body = JSON.stringify(both({ all: [{ atLeast: 1, of: [{ not: { any: Array(16).fill(leaf) } }] }] }), null, 2);
      expect(body.length).to.be.above(4_096);
      const response = await post(body);
      // Read as ERC-1155 from an ERC-20: not found. What matters is that the body was read and checked whole.
      await expectError(response, 404, "No token found at the given address");
    });

    it("answers junk anywhere in the body with a 400 envelope, never a 500 (property-based)", async function () {
      const junk = fc.oneof(
        fc.string({ maxLength: 12 }),
        fc.integer(),
        fc.double(),
        fc.boolean(),
        fc.constant(null),
        fc.array(fc.string({ maxLength: 4 }), { maxLength: 2 }),
        fc.dictionary(fc.string({ maxLength: 6 }), fc.string({ maxLength: 4 }), { maxKeys: 2 }),
        fc.stringMatching(/^[0-9]{0,80}$/),
      );
      const field = (valid: string) => fc.oneof(fc.constant(valid), junk);
      const { node } = fc.letrec((tie) => ({
        node: fc.oneof(
          { depthSize: "small", withCrossShrink: true },
          fc.record(
            {
              chain: fc.oneof(fc.constantFrom("ethereum", "solana"), junk),
              contract_address: field(sources.ethereum.erc20),
              token_mint_address: field(sources.solana.splMint),
              token_id: field(String(ERC1155_ID)),
              min: field("1"),
              max: field("100"),
            },
            { requiredKeys: ["chain"] },
          ),
          fc.record({ all: fc.oneof(fc.array(tie("node"), { maxLength: 3 }), junk) }),
          fc.record({ any: fc.oneof(fc.array(tie("node"), { maxLength: 3 }), junk) }),
          fc.record({ atLeast: fc.oneof(fc.integer({ min: -1, max: 4 }), junk), of: fc.array(tie("node"), { maxLength: 3 }) }),
          fc.record({ not: tie("node") }),
          junk,
        ),
      }));
      const body = fc.record(
        {
          owners: fc.oneof(
            fc.record({ ethereum: field(sources.ethereum.owner), solana: field(sources.solana.owner.address) }, { requiredKeys: [] }),
            junk,
          ),
          condition: node,
          links: fc.oneof(fc.record({ solana: field(link) }, { requiredKeys: [] }), junk),
          reveal: fc.oneof(fc.boolean(), junk),
        },
        { requiredKeys: [] },
      );
      await fc.assert(
        fc.asyncProperty(body, fc.dictionary(fc.string({ maxLength: 6 }), junk, { maxKeys: 1 }), async (known, extra) => {
          const response = await post({ ...extra, ...known });
          const answer = (await response.json()) as { status: unknown; message?: unknown };
          expect(response.status, JSON.stringify(answer)).to.be.oneOf([200, 400, 404]);
          if (response.status !== 200) {
            expect(answer.status).to.equal(response.status);
            expect(answer.message).to.be.a("string");
          }
        }),
        { numRuns: 300 },
      );
    });

    it("answers 404 for a leaf whose asset is not there, even when the verdict would not need it", async function () {
      const noCode = { chain: "ethereum", contract_address: sources.ethereum.noCode };
      await expectError(await post(both({ any: [erc20(), noCode] })), 404, "No token found at the given address");
      const noMint = { chain: "solana", token_mint_address: sources.solana.owner.address };
      await expectError(await post(both({ any: [spl(), noMint] })), 404, "No token found at the given address");
    });

    it("answers 400 naming token_id for an ERC-1155 leaf without one", async function () {
      const { erc1155 } = sources.ethereum;
      await expectError(
        await post(both({ any: [erc20(), { chain: "ethereum", contract_address: erc1155 }] })),
        400,
        `token_id is required: the contract at ${getAddress(erc1155)} is an ERC-1155 token, whose balances are per token id`,
      );
    });

    it("answers 401 before anything else, and 400 for an attest value that is neither true nor false", async function () {
      await expectError(await post("{not json", { headers: { authorization: "" } }), 401, "Missing API key");
      await expectError(await post("{not json", { headers: { authorization: "avn_unknown" } }), 401, "Unknown API key");
      const response = await post(both(erc20()), { query: "?attest=yes" });
      expect(response.status).to.equal(400);
    });
  });

  describe("pricing, metering and documentation", function () {
    it("costs a token per distinct leaf, all or none, and one metered request; ?attest=true without the hub is a 501 after the checks", async function () {
      const metered = await startTestApi(sources, {
        linkChainId: LINK_CHAIN_ID,
        meterUsage: true,
        policy: { capacity: 8, refillPerSecond: 0.001 },
      });
      try {
        const send = (query = "", body: unknown = both({ all: [erc20(), spl()] })) =>
          fetch(`${metered.baseUrl}/api/conditions${query}`, {
            method: "POST",
            headers: { authorization: metered.apiKey, "content-type": "application/json" },
            body: JSON.stringify(body),
          });
        const answered = await send();
        expect(answered.status).to.equal(200);
        expect(answered.headers.get("ratelimit-remaining"), "two distinct leaves, two tokens").to.equal("6");
        // Two leaves that differ only in their bounds share one read, and one token.
        const sameRead = await send("", both({ all: [erc20(), erc20({ min: "5" })] }));
        expect(sameRead.status).to.equal(200);
        expect(sameRead.headers.get("ratelimit-remaining")).to.equal("5");
        // A malformed request with ?attest=true is a 400 first; a good one a 501: one token each without the hub.
        await expectError(await send("?attest=true", both({ all: [] })), 400, "condition.all must be a non-empty array of conditions");
        const attested = await send("?attest=true");
        await expectError(attested, 501, "Attested answers are not enabled on this server");
        expect(attested.headers.get("ratelimit-remaining")).to.equal("3");
        const balance = await fetch(`${metered.baseUrl}/api/ccq-evm`, {
          method: "POST",
          headers: { authorization: metered.apiKey, "content-type": "application/json" },
          body: JSON.stringify({ user_address: sources.ethereum.owner, contract_address: sources.ethereum.erc20 }),
        });
        expect(balance.status).to.equal(200);
        expect(balance.headers.get("ratelimit-remaining")).to.equal("2");
        // More distinct leaves than the bucket can ever hold: no Retry-After, waiting cannot help.
        const nine = Array.from({ length: 9 }, (_, index) => ({
          chain: "ethereum",
          contract_address: sources.ethereum.erc1155,
          token_id: String(index),
        }));
        const tooMany = await send("", both({ any: nine }));
        await expectError(
          tooMany,
          429,
          "A condition of 9 distinct leaves needs 9 rate-limit tokens and this key's bucket holds 8: ask for fewer leaves",
        );
        expect(tooMany.headers.get("retry-after")).to.equal(null);
        // One token left after the arrival's: a two-leaf condition is refused whole, with Retry-After.
        const refused = await send();
        await expectError(refused, 429, "Rate limit exceeded: a condition of 2 distinct leaves needs 2 tokens at once");
        expect(Number(refused.headers.get("retry-after"))).to.be.greaterThan(0);
        expect(refused.headers.get("ratelimit-remaining")).to.equal("0");

        await metered.meter!.flush();
        const rows = await new UsageStore(metered.keys.db).report();
        expect(Object.fromEntries(rows.map((row) => [`${row.endpoint} ${row.statusClass}`, row.requests]))).to.deep.equal({
          "/api/ccq-evm 2xx": 1,
          "/api/conditions 2xx": 2,
          "/api/conditions 429": 2,
          "/api/conditions?attest=true 4xx": 1,
          "/api/conditions?attest=true 5xx": 1,
        });
        const metrics = await (await fetch(`${metered.baseUrl}/metrics`)).text();
        expect(metrics).to.match(/api_requests_total\{route="\/api\/conditions",status="200"\} 2\n/);
      } finally {
        await metered.close();
      }
    });

    it("documents the route in /openapi.json: summary, body, the 200 answer and every error", async function () {
      interface Schema {
        properties: Record<string, Schema & { oneOf?: Schema[]; items?: Schema }>;
        required?: string[];
      }
      const spec = (await (await fetch(`${api.baseUrl}/openapi.json`)).json()) as {
        paths: Record<
          string,
          {
            post: {
              summary: string;
              parameters: Array<{ name: string; in: string }>;
              requestBody: { content: Record<string, { schema: Schema }> };
              responses: Record<string, { description: string; content: Record<string, { schema: Schema }> }>;
            };
          }
        >;
      };
      const operation = spec.paths["/api/conditions"].post;
      expect(operation.summary).to.match(/condition/);
      expect(operation.parameters.map((parameter) => `${parameter.in}:${parameter.name}`)).to.include("query:attest");
      const body = operation.requestBody.content["application/json"].schema;
      expect(Object.keys(body.properties)).to.deep.equal(["owners", "condition", "links", "reveal"]);
      expect(body.required).to.deep.equal(["owners", "condition"]);
      expect(body.properties.condition.oneOf!.map((shape) => (shape as { title?: string }).title)).to.deep.equal([
        "all",
        "any",
        "atLeast",
        "not",
        "ethereum leaf",
        "solana leaf",
      ]);
      expect(Object.keys(operation.responses)).to.include.members(["200", "400", "401", "404", "429", "500", "501", "503"]);
      expect(operation.responses["200"].description).to.equal("Condition Evaluated");
      const data = operation.responses["200"].content["application/json"].schema.properties.data;
      expect(Object.keys(data.properties)).to.deep.equal([
        "verdict",
        "conditionHash",
        "ownersHash",
        "sourceBlocks",
        "leaves",
        "attestation",
        "eas",
      ]);
      const leaf = data.properties.leaves.items!;
      expect(leaf.properties.balance).to.include({ type: "integer" });
      expect(leaf.required).to.deep.equal(["chain", "min", "balance", "QueryResult", "holds"]);
    });
  });

  describe("with the attestation hub (?attest=true)", function () {
    let l2: AttestationL2;
    let hubApi: Awaited<ReturnType<typeof startHubApi>>;
    const disconnects: Array<() => Promise<void>> = [];

    before(async function () {
      l2 = await startAttestationL2();
      // startHubApi and the node signers read only the two RPC endpoints of the sources.
      hubApi = await startHubApi(sources as unknown as SourceFixtures, l2, l2.verifier);
      for (const node of l2.nodes.slice(0, 2)) {
        const conditionSigner = honestConditionSigner(sources, node, l2.verifier);
        disconnects.push(connectNode(hubApi.hubUrl, node, honestSigner(sources, node, l2.verifier), { conditionSigner }));
      }
      await until("both nodes admitted", async () => {
        const { nodes } = (await (await fetch(`${hubApi.api.baseUrl}/attest/nodes`)).json()) as { nodes: Array<{ connected: boolean }> };
        return nodes.filter((node) => node.connected).length === 2;
      });
    });
    after(async function () {
      for (const disconnect of disconnects) await disconnect();
      await hubApi?.api.close();
      await l2?.stop();
    });

    it("answers the verdict with data.attestation signed by a quorum over its hashes and positions; links name the hub's L2", async function () {
      const hubLink = await signText(sources.solana.owner, linkMessage(sources.ethereum.owner, L2_CHAIN_ID));
      const body = both({ atLeast: 2, of: [erc20(), spl({ min: "8000000" }), nft()] }, { links: { solana: hubLink } });
      const { answer } = await evaluate(body, { api: hubApi.api, query: "?attest=true" });
      const { data } = answer;
      expect(data.verdict).to.equal(true);
      expect(data.leaves!.map((leaf) => leaf.holds)).to.deep.equal([true, false, true]);
      const { domain, attestation, signatures } = attestationFromJson(
        conditionKind,
        data.attestation as Parameters<typeof attestationFromJson<ConditionAttestation, ConditionMessage>>[1],
      );
      expect(domain.chainId).to.equal(L2_CHAIN_ID);
      expect(attestation).to.include({ conditionHash: data.conditionHash, ownersHash: data.ownersHash, verdict: true });
      expect(attestation.ethereumBlock).to.equal(BigInt(data.sourceBlocks.ethereum!));
      expect(attestation.solanaSlot).to.equal(BigInt(data.sourceBlocks.solana!));
      expect(signatures).to.have.length.of.at.least(2);
      const burners = l2.nodes.map((node) => node.burner.address);
      for (const { signer, licenseIds, signature } of signatures) {
        expect(recoverAttestationSigner(conditionKind, domain, attestation, licenseIds, signature)).to.equal(signer);
        expect(burners).to.include(signer);
      }
      // reveal: false keeps the attestation and leaves out the leaves.
      const hidden = await evaluate({ ...body, reveal: false }, { api: hubApi.api, query: "?attest=true" });
      expect(hidden.answer.data).to.have.keys(["verdict", "conditionHash", "ownersHash", "sourceBlocks", "attestation"]);
      // The server took the hub's chain id for the links: one signed for another L2 is refused.
      const otherL2 = await signText(sources.solana.owner, linkMessage(sources.ethereum.owner, LINK_CHAIN_ID));
      const refused = await post({ ...body, links: { solana: otherL2 } }, { api: hubApi.api, query: "?attest=true" });
      expect(refused.status).to.equal(400);
      expect(((await refused.json()) as { message: string }).message).to.include(`on chain ${L2_CHAIN_ID}"`);
    });

    it("npm run api takes the hub's chain id for the links, and refuses to start with a different L2_CHAIN_ID", async function () {
      const dir = await mkdtemp(path.join(tmpdir(), "avn-conditions-"));
      const store = await ApiKeys.open(path.join(dir, "keys.sqlite"));
      const { key } = await store.create("conditions");
      await store.close();
      const hubLink = await signText(sources.solana.owner, linkMessage(sources.ethereum.owner, L2_CHAIN_ID));
      const environment = {
        API_PORT: "0",
        EVM_RPC_URLS: sources.anvil.rpcUrl,
        SOLANA_RPC_URLS: sources.solanaRpc.url,
        API_KEYS_DB: path.join(dir, "keys.sqlite"),
        LOG_LEVEL: "silent",
        ATTESTATION_L2_RPC_URL: l2.anvil.rpcUrl,
        ATTESTATION_L2_WS_URL: l2.anvil.wsUrl,
        ATTESTATION_NODE_REGISTRY: l2.nodeRegistry,
        ATTESTATION_VERIFIER: l2.verifier,
      };
      try {
        let error: unknown;
        await startApi(loadApiConfig({ ...environment, L2_CHAIN_ID: String(LINK_CHAIN_ID) })).then(
          (running) => running.close(),
          (reason: unknown) => (error = reason),
        );
        expect(String(error)).to.include(
          `L2_CHAIN_ID is ${LINK_CHAIN_ID}, but the attestation hub's L2 (ATTESTATION_L2_RPC_URL) is chain ${L2_CHAIN_ID}`,
        );
        for (const setting of [{}, { L2_CHAIN_ID: String(L2_CHAIN_ID) }]) {
          const running = await startApi(loadApiConfig({ ...environment, ...setting }));
          try {
            const response = await fetch(`${running.url}/api/conditions`, {
              method: "POST",
              headers: { authorization: key, "content-type": "application/json" },
              body: JSON.stringify(both({ all: [erc20(), spl()] }, { links: { solana: hubLink } })),
            });
            expect(response.status, await response.clone().text()).to.equal(200);
          } finally {
            await running.close();
          }
        }
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
  });

  describe("configuration: the L2 chain id of the links", function () {
    it("L2_CHAIN_ID is optional; the hub's chain id is taken when the hub is on, and a different L2_CHAIN_ID is refused", function () {
      const base = { EVM_RPC_URLS: "http://127.0.0.1:1", SOLANA_RPC_URLS: "http://127.0.0.1:2" };
      const unset = loadApiConfig(base);
      const set = loadApiConfig({ ...base, L2_CHAIN_ID: "901" });
      expect(unset.L2_CHAIN_ID).to.equal(undefined);
      expect(set.L2_CHAIN_ID).to.equal(901);
      for (const bad of ["0", "-1", "9.5", "abc", String(2 ** 53)]) {
        expect(() => loadApiConfig({ ...base, L2_CHAIN_ID: bad }), bad).to.throw(/L2_CHAIN_ID/);
      }
      expect(linkChainId(unset, undefined)).to.equal(undefined);
      expect(linkChainId(set, undefined)).to.equal(901n);
      expect(linkChainId(unset, 900n)).to.equal(900n);
      expect(linkChainId(set, 901n)).to.equal(901n);
      expect(() => linkChainId(set, 900n)).to.throw(
        "L2_CHAIN_ID is 901, but the attestation hub's L2 (ATTESTATION_L2_RPC_URL) is chain 900",
      );
    });

    it("npm run api with L2_CHAIN_ID checks links against it", async function () {
      const dir = await mkdtemp(path.join(tmpdir(), "avn-conditions-"));
      const database = path.join(dir, "keys.sqlite");
      try {
        const store = await ApiKeys.open(database);
        const { key } = await store.create("conditions");
        await store.close();
        const running = await startApi(
          loadApiConfig({
            API_PORT: "0",
            EVM_RPC_URLS: sources.anvil.rpcUrl,
            SOLANA_RPC_URLS: sources.solanaRpc.url,
            API_KEYS_DB: database,
            LOG_LEVEL: "silent",
            L2_CHAIN_ID: String(LINK_CHAIN_ID),
          }),
        );
        try {
          const send = (body: unknown) =>
            fetch(`${running.url}/api/conditions`, {
              method: "POST",
              headers: { authorization: key, "content-type": "application/json" },
              body: JSON.stringify(body),
            });
          const answered = await send(both({ all: [erc20(), spl()] }));
          expect(answered.status, await answered.clone().text()).to.equal(200);
          expect(((await answered.json()) as ConditionAnswer).data.verdict).to.equal(true);
          const otherChain = await signText(sources.solana.owner, linkMessage(sources.ethereum.owner, LINK_CHAIN_ID + 1n));
          expect((await send(both(erc20(), { links: { solana: otherChain } }))).status).to.equal(400);
        } finally {
          await running.close();
        }
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
  });
});

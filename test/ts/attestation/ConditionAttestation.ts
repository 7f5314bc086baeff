import type { ConditionAttestationJson } from "@avn/protocol/attestation-kinds";
import { randomBytes } from "node:crypto";

import { generateKeyPairSigner, getBase58Decoder, signBytes } from "@solana/kit";

import { expect } from "chai";

import {
  ContractFactory,
  getAddress,
  NonceManager,
  Signature,
  toBeHex,
  concat,
  verifyTypedData as ethersVerifyTypedData,
  Wallet,
} from "ethers";

import hre from "hardhat";
import { pino } from "pino";

import { verifyTypedData as viemVerifyTypedData } from "viem";

import {
  CONDITION_SIGNED_PRIMARY_TYPE,
  conditionHash,
  LICENSED_CONDITION_ATTESTATION_TYPES,
  linkMessage,
  ownersHash,
  parseConditionRequest,
  type ConditionAttestation,
  type ConditionRequest,
  type EthereumLeaf,
} from "@avn/protocol/conditions";
import { attestCondition, type AttestedCondition } from "../../../src/api/attestation-hub/attested-condition.ts";

import { parseRelayedAnswer, parseRelayedRound } from "../../../src/api/attestation-hub/bus/bus.ts";

import { RedisHubBus } from "../../../src/api/attestation-hub/bus/redis-bus.ts";

import { ApiMetrics } from "../../../src/api/metrics.ts";

import { conditionRound } from "../../../src/api/attestation-hub/round-kinds.ts";

import { QuorumNotReachedError } from "../../../src/api/attestation-hub/rounds.ts";

import { AssetNotFoundError } from "../../../src/chains/rpc/errors.ts";

import {
  attestationDigest,
  attestationDomain,
  attestationFromJson,
  attestationStructHash,
  attestationToJson,
  recoverAttestationSigner,
  signAttestation,
} from "../../../src/common/attestation.ts";

import { conditionKind } from "@avn/protocol/attestation-kinds";

import {
  attestConditionRequestSchema,
  MAX_FRAME_BYTES,
  MAX_REFUSAL_REASON,
  parseNodeMessage,
  type ConditionQuery,
  type HubMessage,
} from "../../../src/common/hub-protocol.ts";

import { devAccount } from "../../../src/devnet/accounts.ts";

import { startAnvil, type AnvilInstance } from "../../../src/devnet/anvil.ts";

import { ABOVE_2_53, ERC1155_ITEM_AMOUNT, ERC1155_ITEM_ID, SPL_ACCOUNT_AMOUNTS } from "../../../src/devnet/demo-holdings.ts";

import { installMulticall3 } from "../../../src/devnet/op/l2.ts";

import { devnetProvider } from "../../../src/devnet/op-devnet.ts";

import { startSourceFixtures, type SourceFixtures } from "../../../src/devnet/source-chains.ts";

import type { ConditionReply, ConditionSigner } from "../../../src/node/condition-signer.ts";

import { DEFAULT_ATTESTATION_MAX_BLOCK_LAG } from "../../../src/node/config.ts";

import { REDIS, startRedis } from "../../helpers/redis.ts";

import { requireService } from "../../helpers/services.ts";

import {
  connectNode,
  honestConditionSigner,
  honestSigner,
  L2_CHAIN_ID,
  QUORUM,
  startAttestationL2,
  startHubApi,
  until,
  type AttestationL2,
  type LicensedNode,
} from "./fixture.ts";

type AttestConditionFrame = Extract<HubMessage, { type: "attestCondition" }>;

const MAX_UINT256 = (2n ** 256n - 1n).toString();
const MAX_UINT64 = 2n ** 64n - 1n;
const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
/** ethers wants mutable type arrays. */
const ETHERS_TYPES = Object.fromEntries(
  Object.entries(LICENSED_CONDITION_ATTESTATION_TYPES).map(([name, fields]) => [name, fields.map((field) => ({ ...field }))]),
);
const SOME_HASH = `0x${"ab".repeat(32)}`;
/**
 * The rounds' deadline here. A condition costs a node more reads than a balance (the both-chains one: an
 * ERC-1155 balance, three Solana owners' accounts and the link's ed25519 check), and every node's Solana
 * reads queue at the one LiteSVM endpoint in this process: a cold first round on a busy 2-core machine was
 * seen past the fixture's 1.5 s.
 */
const DEADLINE_MS = 4_000;

/** A hub's condition frame for `request` (the hub's own builder), with the positions given. */
function frameOf(request: ConditionRequest, fields: Partial<Omit<ConditionQuery, "request">> = {}): AttestConditionFrame {
  const query: ConditionQuery = { request, ethereumBlock: 0n, solanaSlot: 0n, issuedAt: 0n, ...fields };
  return conditionRound(query).request("r1") as AttestConditionFrame;
}

/** The high-s twin of a signature: the same signer to plain ecrecover, refused by the contract and by recovery here. */
function malleable(signature: string): string {
  const parsed = Signature.from(signature);
  return concat([parsed.r, toBeHex(SECP256K1_N - BigInt(parsed.s), 32), toBeHex(parsed.v === 27 ? 28 : 27, 1)]);
}

describe("signed verdicts over holding conditions (issue 32)", function () {
  this.timeout(180_000);

  describe("the wire protocol and the signing helpers", function () {
    const nodeFrame = () => ({
      type: "conditionAttestation",
      id: "r1",
      message: {
        conditionHash: SOME_HASH,
        ownersHash: SOME_HASH,
        verdict: false,
        ethereumBlock: "12",
        solanaSlot: "0",
        issuedAt: "1763900000",
      },
      licenseIds: ["1"],
      signature: `0x${"11".repeat(65)}`,
    });
    const parse = (frame: unknown) => parseNodeMessage(JSON.stringify(frame));

    it("accepts a node's conditionAttestation frame; refuses a verdict that is not a JSON boolean, a position above uint64, a short hash", function () {
      expect(parse(nodeFrame())).to.deep.equal(nodeFrame());
      const message = nodeFrame().message;
      for (const bad of [
        { ...message, verdict: "false" },
        { ...message, verdict: 0 },
        { ...message, verdict: undefined },
        { ...message, ethereumBlock: (MAX_UINT64 + 1n).toString() },
        { ...message, solanaSlot: "-1" },
        { ...message, issuedAt: "1.5" },
        { ...message, conditionHash: "0xabcd" },
        { ...message, ownersHash: `${SOME_HASH}00` },
      ])
        expect(parse({ ...nodeFrame(), message: bad }), JSON.stringify(bad)).to.equal(undefined);
      expect(parse({ ...nodeFrame(), message: { ...message, ethereumBlock: MAX_UINT64.toString() } })).to.not.equal(undefined);
      expect(parse({ ...nodeFrame(), licenseIds: [] })).to.equal(undefined);
      // A refusal stays the one message for both kinds; a reason over the cap would be malformed.
      expect(parse({ type: "refusal", id: "r1", reason: "x".repeat(MAX_REFUSAL_REASON) })).to.not.equal(undefined);
      expect(parse({ type: "refusal", id: "r1", reason: "x".repeat(MAX_REFUSAL_REASON + 1) })).to.equal(undefined);
    });

    it("checks the hub's attestCondition frame: what the hub builds passes; reveal, an unknown key, a position above uint64 do not", function () {
      const request = parseConditionRequest({
        owners: { ethereum: devAccount(7).address },
        condition: { chain: "ethereum", contract_address: devAccount(1).address },
        reveal: false,
      });
      const frame = frameOf(request, { ethereumBlock: 5n, issuedAt: 9n });
      // The hub sends the normal form without `reveal` (nodes sign no balances).
      expect(frame.request).to.deep.equal({ owners: request.owners, condition: request.condition });
      expect(attestConditionRequestSchema.safeParse(frame).success).to.equal(true);
      for (const bad of [
        { ...frame, request: { ...frame.request, reveal: true } },
        { ...frame, request: { ...frame.request, extra: 1 } },
        { ...frame, ethereumBlock: (MAX_UINT64 + 1n).toString() },
        // Not digits: refused as malformed, not thrown from inside the check of its range.
        { ...frame, ethereumBlock: "abc" },
        { ...frame, issuedAt: 9 },
        { ...frame, request: "{}" },
      ])
        expect(attestConditionRequestSchema.safeParse(bad).success, JSON.stringify(bad)).to.equal(false);
    });

    it("relays both new frames over the bus unchanged, and drops malformed ones", function () {
      const request = parseConditionRequest({
        owners: { ethereum: devAccount(7).address },
        condition: { any: [{ chain: "ethereum", contract_address: devAccount(1).address, min: "3" }] },
      });
      const round = { origin: "a1", deadlineMs: 1_500, burners: [devAccount(6).address], request: frameOf(request, { ethereumBlock: 5n }) };
      const carried = parseRelayedRound(JSON.parse(JSON.stringify(round)));
      expect(carried).to.deep.equal(round);
      expect(parseRelayedRound({ ...round, request: { ...round.request, solanaSlot: "x" } })).to.equal(undefined);
      expect(parseRelayedRound({ ...round, burners: ["not an address"] })).to.equal(undefined);
      const answer = { burner: devAccount(6).address, answer: nodeFrame() };
      expect(parseRelayedAnswer(JSON.parse(JSON.stringify(answer)))).to.deep.equal(answer);
      expect(parseRelayedAnswer({ ...answer, answer: { ...nodeFrame(), message: { ...nodeFrame().message, verdict: "true" } } })).to.equal(
        undefined,
      );
    });

    it("keeps the largest condition request (16 leaves, every field at its longest, 4 deep) and a node's answer under half the frame cap", function () {
      const leaf = (index: number) => ({
        chain: "ethereum",
        contract_address: `0x${index.toString(16).padStart(40, "f")}`,
        token_id: MAX_UINT256,
        min: MAX_UINT256,
        max: MAX_UINT256,
        delegations: true,
      });
      // The longest way to nest 4 deep: every leaf under its own three `atLeast` (the longest combinator).
      const wrapped = (node: unknown, levels: number): unknown => (levels === 0 ? node : { atLeast: 1, of: [wrapped(node, levels - 1)] });
      const longest = getBase58Decoder();
      const request = parseConditionRequest({
        owners: { ethereum: devAccount(7).address, solana: longest.decode(new Uint8Array(32).fill(255)) },
        condition: { atLeast: 16, of: Array.from({ length: 16 }, (_, index) => wrapped(leaf(index), 3)) },
        links: { solana: longest.decode(new Uint8Array(64).fill(255)) },
      });
      expect(request.owners.solana).to.have.length(44);
      expect(request.links!.solana).to.have.length(88);
      const frame = frameOf(request, { ethereumBlock: MAX_UINT64, solanaSlot: MAX_UINT64, issuedAt: MAX_UINT64 });
      const requestBytes = Buffer.byteLength(JSON.stringify({ ...frame, id: "f".repeat(24) }));
      expect(requestBytes)
        .to.be.above(6_000)
        .and.below(MAX_FRAME_BYTES / 2);
      const answer = {
        ...nodeFrame(),
        id: "f".repeat(24),
        message: { ...nodeFrame().message, ethereumBlock: MAX_UINT64.toString(), solanaSlot: MAX_UINT64.toString() },
        licenseIds: Array.from({ length: 16 }, () => MAX_UINT256),
      };
      expect(Buffer.byteLength(JSON.stringify(answer))).to.be.below(MAX_FRAME_BYTES / 2);
    });

    it("round-trips the JSON form (a boolean verdict, decimal strings, lower-case hashes); recovery refuses a high-s, a malformed and another list's signature", async function () {
      const wallet = new Wallet(devAccount(6).privateKey);
      const domain = attestationDomain(L2_CHAIN_ID, devAccount(1).address);
      const attestation: ConditionAttestation = {
        conditionHash: SOME_HASH,
        ownersHash: `0x${"cd".repeat(32)}`,
        verdict: false,
        ethereumBlock: MAX_UINT64,
        solanaSlot: 0n,
        issuedAt: 1_763_900_000n,
      };
      const licenseIds = [2n, 5n];
      const signature = await signAttestation(conditionKind, wallet, domain, attestation, licenseIds);
      const json = JSON.parse(
        JSON.stringify(attestationToJson(conditionKind, domain, attestation, [{ signer: wallet.address, licenseIds, signature }])),
      ) as ConditionAttestationJson;
      expect(json.message).to.deep.equal({
        conditionHash: SOME_HASH,
        ownersHash: `0x${"cd".repeat(32)}`,
        verdict: false,
        ethereumBlock: MAX_UINT64.toString(),
        solanaSlot: "0",
        issuedAt: "1763900000",
      });
      const parsed = attestationFromJson(conditionKind, {
        ...json,
        message: { ...json.message, conditionHash: SOME_HASH.toUpperCase().replace("0X", "0x") },
      });
      expect(parsed.attestation).to.deep.equal(attestation);
      expect(parsed.signatures).to.deep.equal([{ signer: wallet.address, licenseIds, signature }]);
      expect(() =>
        attestationFromJson(conditionKind, { ...json, message: { ...json.message, verdict: "false" as unknown as boolean } }),
      ).to.throw(/JSON boolean/);
      expect(recoverAttestationSigner(conditionKind, domain, attestation, licenseIds, signature)).to.equal(wallet.address);
      expect(recoverAttestationSigner(conditionKind, domain, attestation, [5n, 2n], signature)).to.not.equal(wallet.address);
      expect(recoverAttestationSigner(conditionKind, domain, { ...attestation, verdict: true }, licenseIds, signature)).to.not.equal(
        wallet.address,
      );
      expect(recoverAttestationSigner(conditionKind, domain, attestation, licenseIds, malleable(signature))).to.equal(undefined);
      expect(recoverAttestationSigner(conditionKind, domain, attestation, licenseIds, "0x1234")).to.equal(undefined);
      // The struct's hash is one key whatever the list; the digest differs with the list.
      expect(attestationStructHash(conditionKind, attestation)).to.not.equal(
        attestationStructHash(conditionKind, { ...attestation, verdict: true }),
      );
      expect(attestationDigest(conditionKind, domain, attestation, [2n])).to.not.equal(
        attestationDigest(conditionKind, domain, attestation, licenseIds),
      );
    });
  });

  describe("a quorum of nodes signs the verdict each reads", function () {
    let sources: SourceFixtures;
    let l2: AttestationL2;
    let hubApi: Awaited<ReturnType<typeof startHubApi>>;
    /** An "Ethereum" where the ERC-20 at the demo's address holds less for the holder: a node pointed there reads otherwise. */
    let divergent: AnvilInstance;
    const disconnects: Array<() => Promise<void>> = [];

    before(async function () {
      sources = await startSourceFixtures();
      l2 = await startAttestationL2();
      hubApi = await startHubApi(sources, l2, l2.verifier, { deadlineMs: DEADLINE_MS });
      divergent = await startDivergentEvm(sources);
    });
    afterEach(async function () {
      for (const disconnect of disconnects.splice(0)) await disconnect();
      await until("every node gone", () => hubApi.hub.stats.list().every((node) => !node.connected));
    });
    after(async function () {
      await hubApi?.api.close();
      await divergent?.stop();
      await l2?.stop();
      await sources?.stop();
    });

    const conditionSigner = (node: LicensedNode) => honestConditionSigner(sources, node, l2.verifier);
    /** Connects each node with its balance signer and `signer` (an honest condition signer unless given), to `hubUrl`. */
    const join = async (entries: Array<[LicensedNode, Pick<ConditionSigner, "answer">?]>, hub = hubApi) => {
      for (const [node, signer] of entries)
        disconnects.push(
          connectNode(hub.hubUrl, node, honestSigner(sources, node, l2.verifier), { conditionSigner: signer ?? conditionSigner(node) }),
        );
      await until(
        `${entries.length} node(s) admitted`,
        () => hub.hub.stats.list().filter((node) => node.connected).length === entries.length,
      );
    };
    /** The real signer, whose every reply is kept for the test to read. */
    const recording = (signer: Pick<ConditionSigner, "answer">) => {
      const replies: ConditionReply[] = [];
      return {
        replies,
        answer: async (frame: AttestConditionFrame) => {
          const reply = await signer.answer(frame);
          replies.push(reply);
          return reply;
        },
      };
    };
    const linkSignature = async (ethereum: string, chainId: bigint) =>
      getBase58Decoder().decode(
        await signBytes(sources.svm.collector.keyPair.privateKey, new TextEncoder().encode(linkMessage(ethereum, chainId))),
      );
    const requests = {
      evmHolds: () =>
        parseConditionRequest({
          owners: { ethereum: sources.evm.holder },
          condition: { chain: "ethereum", contract_address: sources.evm.erc20, min: ABOVE_2_53.toString() },
        }),
      evmHoldsMore: () =>
        parseConditionRequest({
          owners: { ethereum: sources.evm.holder },
          condition: { chain: "ethereum", contract_address: sources.evm.erc20, min: (ABOVE_2_53 + 1n).toString() },
        }),
      svmHolds: () =>
        parseConditionRequest({
          owners: { solana: sources.svm.owner },
          condition: {
            chain: "solana",
            token_mint_address: sources.svm.splMint,
            min: (SPL_ACCOUNT_AMOUNTS[0] + SPL_ACCOUNT_AMOUNTS[1]).toString(),
          },
        }),
      svmHoldsNot: () =>
        parseConditionRequest({
          owners: { solana: sources.svm.owner },
          condition: { not: { chain: "solana", token_mint_address: sources.svm.splMint } },
        }),
      linked: async (chainId = L2_CHAIN_ID) =>
        parseConditionRequest({
          owners: { ethereum: sources.evm.collector, solana: sources.svm.collector.address },
          condition: {
            all: [
              {
                chain: "ethereum",
                contract_address: sources.evm.erc1155,
                token_id: ERC1155_ITEM_ID.toString(),
                min: ERC1155_ITEM_AMOUNT.toString(),
              },
              { atLeast: 2, of: sources.svm.collection.map((mint) => ({ chain: "solana", token_mint_address: mint })) },
            ],
          },
          links: { solana: await linkSignature(sources.evm.collector, chainId) },
        }),
    };
    const l2Time = async () => BigInt((await l2.ethers.provider.getBlock("latest"))!.timestamp);
    const rpc = async (url: string, method: string, params: unknown[] = []) => {
      const response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
      });
      return ((await response.json()) as { result: string }).result;
    };
    const evmHead = async () => BigInt(await rpc(sources.anvil.rpcUrl, "eth_blockNumber"));
    const isValidOnChain = async (json: ConditionAttestationJson) => {
      const { attestation, signatures } = attestationFromJson(conditionKind, json);
      return l2.contracts.attestationVerifier.isConditionAttestationValid(attestation, signatures, 3_600n);
    };

    /** Every check a client and a contract make of a signed verdict. */
    const expectSigned = async (request: ConditionRequest, result: AttestedCondition, verdict: boolean) => {
      expect(result.reading.verdict).to.equal(verdict);
      const json = JSON.parse(JSON.stringify(result.attestation)) as ConditionAttestationJson;
      const { domain, message, signatures } = json;
      expect(domain).to.deep.equal({
        name: "Asset Verification Network",
        version: "1",
        chainId: Number(L2_CHAIN_ID),
        verifyingContract: l2.verifier,
      });
      expect(message.verdict).to.equal(verdict); // a JSON boolean
      expect(message.conditionHash).to.equal(conditionHash(request.condition));
      expect(message.ownersHash).to.equal(ownersHash(request.owners));
      expect(message.ethereumBlock).to.equal(result.positions.ethereumBlock.toString());
      expect(message.solanaSlot).to.equal(result.positions.solanaSlot.toString());
      const licenses = new Set(signatures.flatMap((signature) => signature.licenseIds));
      expect(BigInt(licenses.size)).to.be.at.least(QUORUM);
      const parsed = attestationFromJson(conditionKind, json);
      for (const [index, { signer, licenseIds, signature }] of signatures.entries()) {
        // What a client does with the documented JSON: the message and that signature's own license ids.
        const signed = { attestation: message, licenseIds };
        expect(ethersVerifyTypedData(domain, ETHERS_TYPES, signed, signature)).to.equal(signer);
        const viemValid = await viemVerifyTypedData({
          address: signer as `0x${string}`,
          domain: { ...domain, verifyingContract: domain.verifyingContract as `0x${string}` },
          types: LICENSED_CONDITION_ATTESTATION_TYPES,
          primaryType: CONDITION_SIGNED_PRIMARY_TYPE,
          message: signed as never,
          signature: signature as `0x${string}`,
        });
        expect(viemValid, `viem verifies signature ${index}`).to.equal(true);
        expect(
          await l2.contracts.attestationVerifier.hashConditionAttestation(parsed.attestation, parsed.signatures[index].licenseIds),
        ).to.equal(attestationDigest(conditionKind, parsed.domain, parsed.attestation, parsed.signatures[index].licenseIds));
      }
      expect(await isValidOnChain(json)).to.equal(true);
      return json;
    };

    it("signs true and false verdicts on Ethereum alone and on Solana alone, each position 0 for the chain without leaves, valid on-chain", async function () {
      await join(l2.nodes.slice(0, 3).map((node) => [node]));
      const head = await evmHead();
      for (const [name, verdict, chain] of [
        ["evmHolds", true, "ethereum"],
        ["evmHoldsMore", false, "ethereum"],
        ["svmHolds", true, "solana"],
        ["svmHoldsNot", false, "solana"],
      ] as const) {
        const request = requests[name]();
        const result = await attestCondition(hubApi.service, request);
        await expectSigned(request, result, verdict);
        if (chain === "ethereum") {
          expect(result.positions).to.deep.equal({ ethereumBlock: head, solanaSlot: 0n }); // confirmations 0 in the test hub
          expect(result.reading.leaves.map((leaf) => leaf.balance)).to.deep.equal([ABOVE_2_53]);
        } else {
          expect(result.positions.ethereumBlock).to.equal(0n);
          expect(result.positions.solanaSlot > 0n).to.equal(true);
          expect(result.reading.leaves.map((leaf) => leaf.balance)).to.deep.equal([SPL_ACCOUNT_AMOUNTS[0] + SPL_ACCOUNT_AMOUNTS[1]]);
        }
      }
      expect(await hubApi.metrics.registry.getSingleMetricAsString("api_attestation_rounds_total")).to.match(
        /chain="condition",outcome="quorum"} 4/,
      );
    });

    it("signs a verdict over both chains with a valid link; the verifier refuses it for another owner, condition, verdict or a padded license list", async function () {
      const [nodeA, nodeB, nodeC, nodeD] = l2.nodes;
      await join([[nodeA], [nodeB], [nodeC]]);
      const request = await requests.linked();
      const result = await attestCondition(hubApi.service, request);
      const json = await expectSigned(request, result, true);
      expect(result.positions.ethereumBlock > 0n && result.positions.solanaSlot > 0n).to.equal(true);
      expect(result.reading.leaves.map((leaf) => leaf.holds)).to.deep.equal([true, true, true, false]);

      const otherOwners = ownersHash({ ethereum: sources.evm.holder, solana: sources.svm.collector.address });
      const otherCondition = conditionHash(requests.evmHolds().condition);
      for (const [what, message] of [
        ["another owner", { ...json.message, ownersHash: otherOwners }],
        ["another condition", { ...json.message, conditionHash: otherCondition }],
        ["a flipped verdict", { ...json.message, verdict: !json.message.verdict }],
      ] as const)
        expect(await isValidOnChain({ ...json, message }), what).to.equal(false);
      // Whoever carries the answer cannot add a license to a node's signed list (node D's: live, delegated, not signed).
      const [first, ...rest] = json.signatures;
      const padded = [{ ...first, licenseIds: [...first.licenseIds, nodeD.licenseId.toString()] }, ...rest];
      expect(await isValidOnChain({ ...json, signatures: padded }), "a padded license list").to.equal(false);
    });

    it("a node whose source reads otherwise signs the other verdict; the others reach quorum, or with too few a 503 as soon as all answered", async function () {
      const [nodeA, nodeB, nodeC] = l2.nodes;
      await alignHead(divergent, await evmHead());
      const skeptic = recording(honestConditionSigner({ anvil: divergent, solanaRpc: sources.solanaRpc }, nodeC, l2.verifier));
      const disagreedBefore = hubApi.hub.stats.get(nodeC.burner.address)?.answers.disagreed ?? 0;
      await join([[nodeA], [nodeB], [nodeC, skeptic]]);
      const request = requests.evmHolds();
      const result = await attestCondition(hubApi.service, request);
      await expectSigned(request, result, true);
      expect(result.attestation.signatures.map((signature) => signature.signer)).to.have.members([
        nodeA.burner.address,
        nodeB.burner.address,
      ]);
      await until("the skeptic answered", () => skeptic.replies.length === 1);
      // Nobody tells a node the verdict: it signs what it read, and the hub counts it against the quorum's.
      expect(skeptic.replies[0]).to.deep.include({ type: "conditionAttestation" });
      expect((skeptic.replies[0] as { message: { verdict: boolean } }).message.verdict).to.equal(false);
      await until("its disagreement counted", () => hubApi.hub.stats.get(nodeC.burner.address)!.answers.disagreed === disagreedBefore + 1);

      for (const disconnect of disconnects.splice(0)) await disconnect();
      await until("nodes gone", () => hubApi.hub.stats.list().every((node) => !node.connected));
      await join([[nodeA], [nodeC, skeptic]]);
      const started = performance.now();
      let failure: unknown;
      await attestCondition(hubApi.service, request).catch((error: unknown) => (failure = error));
      expect(failure).to.be.instanceOf(QuorumNotReachedError);
      expect((failure as Error).message).to.equal(
        "Attestation quorum not reached: every node asked has answered; the most licenses agreeing on one answer was 1 of quorum 2",
      );
      // Both nodes answered, one struct each: no answer is left to make a quorum, so the round ends now.
      expect(performance.now() - started).to.be.below(hubApi.hub.deadlineMs);
      expect(await hubApi.metrics.registry.getSingleMetricAsString("api_attestation_rounds_total")).to.match(
        /chain="condition",outcome="no-quorum"} 1/,
      );
    });

    it("a missing asset: every node refuses \"not found\", the round ends at once, and the API's own read makes it AssetNotFoundError (the route's 404)", async function () {
      await join(l2.nodes.slice(0, 3).map((node) => [node]));
      const refusedBefore = hubApi.hub.stats.list().reduce((sum, node) => sum + node.answers.refused, 0);
      const request = parseConditionRequest({
        owners: { ethereum: sources.evm.holder },
        condition: { chain: "ethereum", contract_address: Wallet.createRandom().address },
      });
      const started = performance.now();
      let failure: unknown;
      await attestCondition(hubApi.service, request).catch((error: unknown) => (failure = error));
      expect(failure).to.be.instanceOf(AssetNotFoundError);
      expect(performance.now() - started).to.be.below(hubApi.hub.deadlineMs);
      expect(hubApi.hub.stats.list().reduce((sum, node) => sum + node.answers.refused, 0)).to.equal(refusedBefore + 3);
    });

    describe("the node's condition signer refuses", function () {
      let signer: ConditionSigner;
      before(function () {
        signer = conditionSigner(l2.nodes[0]);
      });
      const reasonOf = async (frame: AttestConditionFrame, sign: Pick<ConditionSigner, "answer"> = signer) => {
        const reply = await sign.answer(frame);
        expect(reply.type, JSON.stringify(reply)).to.equal("refusal");
        return reply.type === "refusal" ? reply.reason : "";
      };
      const pinned = async () => ({ ethereumBlock: await evmHead(), issuedAt: await l2Time() });

      it("signs a well-formed request at fresh positions (the baseline of the refusals below), recoverable to its burner", async function () {
        const node = l2.nodes[0];
        const request = requests.evmHolds();
        const positions = await pinned();
        const reply = await signer.answer(frameOf(request, positions));
        if (reply.type !== "conditionAttestation") throw new Error(`refused: ${JSON.stringify(reply)}`);
        expect(reply.licenseIds).to.deep.equal([node.licenseId.toString()]);
        // What it read travels with the signature: the balance and its QueryResult word, per leaf.
        expect(reply.evidence).to.deep.equal({ leaves: [{ balance: ABOVE_2_53.toString(), queryResult: toBeHex(ABOVE_2_53, 32) }] });
        const attestation: ConditionAttestation = {
          conditionHash: conditionHash(request.condition),
          ownersHash: ownersHash(request.owners),
          verdict: true,
          ethereumBlock: positions.ethereumBlock,
          solanaSlot: 0n,
          issuedAt: positions.issuedAt,
        };
        expect(reply.message).to.deep.equal(
          attestationToJson(conditionKind, attestationDomain(L2_CHAIN_ID, l2.verifier), attestation, []).message,
        );
        expect(
          recoverAttestationSigner(
            conditionKind,
            attestationDomain(L2_CHAIN_ID, l2.verifier),
            attestation,
            [node.licenseId],
            reply.signature,
          ),
        ).to.equal(node.burner.address);
      });

      it("both owners without the link signature, with a link signed for another L2 chain, or by another key", async function () {
        const positions = { ...(await pinned()), solanaSlot: await hubApi.service.solana.latestSlot() };
        const linked = await requests.linked();
        const unlinked = { owners: linked.owners, condition: linked.condition };
        expect(await reasonOf({ ...frameOf(linked, positions), request: unlinked })).to.match(
          /^malformed condition request: links\.solana/,
        );
        const refusedLink = `the Solana link signature does not verify for L2 chain ${L2_CHAIN_ID}`;
        expect(await reasonOf(frameOf(await requests.linked(L2_CHAIN_ID + 1n), positions))).to.equal(refusedLink);
        const stranger = await generateKeyPairSigner();
        const strangers = getBase58Decoder().decode(
          await signBytes(stranger.keyPair.privateKey, new TextEncoder().encode(linkMessage(sources.evm.collector, L2_CHAIN_ID))),
        );
        expect(await reasonOf(frameOf({ ...linked, links: { solana: strangers } }, positions))).to.equal(refusedLink);
        // The same request with the owner's own link is signed.
        expect((await signer.answer(frameOf(linked, positions))).type).to.equal("conditionAttestation");
      });

      it("a position for a chain without leaves, none for a chain with leaves, an old block, a skewed issue time", async function () {
        const request = requests.evmHolds();
        const positions = await pinned();
        expect(await reasonOf(frameOf(request, { ...positions, solanaSlot: 5n }))).to.equal(
          "the condition has no solana leaf, but a solana position 5 is pinned",
        );
        expect(await reasonOf(frameOf(request, { ...positions, ethereumBlock: 0n }))).to.equal(
          "the condition has ethereum leaves, but no ethereum position is pinned",
        );
        expect(await reasonOf(frameOf(requests.svmHolds(), { issuedAt: positions.issuedAt }))).to.equal(
          "the condition has solana leaves, but no solana position is pinned",
        );
        expect(await reasonOf(frameOf(request, { ...positions, issuedAt: positions.issuedAt + 3_600n }))).to.match(
          /off this node's L2 head/,
        );
        await rpc(sources.anvil.rpcUrl, "anvil_mine", ["0x50"]); // enough blocks for one past the lag below the head
        const head = await evmHead();
        // The node's default: 10 blocks (2 minutes), what consumers are told a fresh issuedAt covers.
        const lag = BigInt(DEFAULT_ATTESTATION_MAX_BLOCK_LAG);
        expect(lag).to.equal(10n);
        // A signer made now: the one above remembers its head for a moment, as the node's readers do.
        const fresh = conditionSigner(l2.nodes[0]);
        expect(await reasonOf(frameOf(request, { ...positions, ethereumBlock: head - lag - 1n }), fresh)).to.equal(
          `block ${head - lag - 1n} is more than ${lag} blocks below the head`,
        );
        expect((await fresh.answer(frameOf(request, { ...positions, ethereumBlock: head - lag }))).type).to.equal("conditionAttestation");
      });

      it("a request not in its normal form, with reveal, or malformed; a missing asset; no license", async function () {
        const request = requests.evmHolds();
        const positions = await pinned();
        const frame = frameOf(request, positions);
        const leaf = request.condition as EthereumLeaf;
        const checksummed = {
          ...frame,
          request: { ...frame.request, condition: { ...leaf, contract_address: getAddress(leaf.contract_address) } },
        };
        expect(await reasonOf(checksummed)).to.equal("the condition request is not in its normal form");
        expect(await reasonOf({ ...frame, request: { ...frame.request, reveal: true } as never })).to.equal("malformed condition request");
        expect(await reasonOf({ ...frame, request: { ...frame.request, condition: { chain: "bitcoin" } as never } })).to.match(
          /^malformed condition request: condition\.chain/,
        );
        const missing = parseConditionRequest({
          owners: { ethereum: sources.evm.holder },
          condition: { chain: "ethereum", contract_address: Wallet.createRandom().address },
        });
        expect(await reasonOf(frameOf(missing, positions))).to.equal("not found");
        expect(
          await reasonOf(
            frame,
            honestConditionSigner(sources, l2.nodes[0], l2.verifier, () => []),
          ),
        ).to.equal("no license is delegated to this node");
      });
    });

    it("a round relayed across two hub instances (Redis) settles a condition with a node on each", async function () {
      const redis = await startRedis();
      if (redis === undefined) requireService(this, REDIS);
      const logger = pino({ level: "silent" });
      // Both instances share one bus secret, as the instances of one hub do (HUB_BUS_SECRET).
      const secret = randomBytes(32).toString("hex");
      const bus = (name: string) => RedisHubBus.connect(redis.url, name, logger, { secret, metrics: new ApiMetrics() });
      const joined = { deadlineMs: DEADLINE_MS, bus };
      const first = await startHubApi(sources, l2, l2.verifier, joined);
      const second = await startHubApi(sources, l2, l2.verifier, joined);
      try {
        const [nodeA, nodeB] = l2.nodes;
        await join([[nodeA]], first);
        await join([[nodeB]], second);
        const burners = [nodeA, nodeB].map((node) => node.burner.address).sort();
        const connected = async () =>
          (await first.hub.stats.listAll())
            .filter((node) => node.connected)
            .map((node) => node.burner)
            .sort()
            .join();
        await until("both nodes seen from the first instance", async () => (await connected()) === burners.join());
        // Quorum 2, one node on each instance: the answer needs the node the other instance holds.
        const request = await requests.linked();
        const result = await attestCondition(first.service, request);
        await expectSigned(request, result, true);
        expect(result.attestation.signatures.map((signature) => signature.signer).sort()).to.deep.equal(burners);
      } finally {
        for (const disconnect of disconnects.splice(0)) await disconnect();
        await first.api.close();
        await second.api.close();
        await redis.stop();
      }
    });
  });
});

/**
 * A second "Ethereum" (chain 1, Multicall3) where the ERC-20 at the demo's address holds 1,000 for the
 * holder instead of more than 2^53: deployed by the same account at the same nonce, so at the same address.
 */
async function startDivergentEvm(sources: SourceFixtures): Promise<AnvilInstance> {
  const anvil = await startAnvil({ chainId: 1, disableCodeSizeLimit: hre.globalOptions.coverage });
  const provider = devnetProvider(anvil.rpcUrl, 1);
  try {
    await installMulticall3(provider);
    const deployer = new NonceManager(new Wallet(devAccount(0).privateKey, provider));
    const artifact = await hre.artifacts.readArtifact("PlainERC20");
    const token = await new ContractFactory(artifact.abi, artifact.bytecode, deployer).deploy(sources.evm.holder, 1_000n);
    await token.waitForDeployment();
    if ((await token.getAddress()) !== getAddress(sources.evm.erc20)) throw new Error("the divergent ERC-20 is not at the demo's address");
    return anvil;
  } catch (error) {
    await anvil.stop();
    throw error;
  } finally {
    provider.destroy();
  }
}

/** Mines `anvil` up to block `head`, so that a node pointed at it can read the block the hub pins. */
async function alignHead(anvil: AnvilInstance, head: bigint): Promise<void> {
  const provider = devnetProvider(anvil.rpcUrl, 1);
  try {
    const own = BigInt(await provider.getBlockNumber());
    if (own < head) await provider.send("anvil_mine", [toBeHex(head - own)]);
  } finally {
    provider.destroy();
  }
}

import { readFile } from "node:fs/promises";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";

import { expect } from "chai";
import hre from "hardhat";
import {
  AbiCoder,
  dataSlice,
  JsonRpcProvider,
  NonceManager,
  solidityPackedKeccak256,
  Wallet,
  ZeroAddress,
  ZeroHash,
  zeroPadValue,
} from "ethers";
import { verifyTypedData as viemVerifyTypedData } from "viem";

import {
  AttestationExporter__factory,
  GameItem__factory,
  NodeLicense__factory,
  NodeRegistry__factory,
  PrimaryToken__factory,
  L1BlockHashes__factory,
  StorageProofVerifier__factory,
  VerificationRegistry__factory,
} from "../../../typechain-types/index.ts";
import { devAccount } from "../../../src/devnet/accounts.ts";
import { attestAndRecord } from "../../../src/devnet/demo-attest.ts";
import { claimGameItem, postToApi, solanaBytes32, verifyOnChainAndByApi, type DemoQuery } from "../../../src/devnet/demo-verify.ts";
import { claimItemWithVerdict, evaluateDemoCondition } from "../../../src/devnet/demo-conditions.ts";
import { attestDirectlyOnEas, exportVerdictToEas } from "../../../src/devnet/demo-eas.ts";
import { runDelegationDemo } from "../../../src/devnet/demo-delegations.ts";
import { recordInARow } from "../../../src/devnet/record-loop.ts";
import { eventArgs } from "../../../src/devnet/events.ts";
import type { StackFile } from "../../../src/common/stack-file.ts";
import type { VerificationNetwork } from "../../../src/devnet/verification-network.ts";
import type { NetworkNodes } from "../../../src/api/network/network-service.ts";
import type { NetworkStatus } from "@avn/protocol/qos";
import { BURNER_FILE } from "../../../src/node/burner.ts";
import { STATE_FILE } from "../../../src/node/main.ts";
import { eventually, startTestDevnet, type TestDevnet } from "../../helpers/devnet.ts";
import { buildBalanceProof } from "../../../src/chains/evm/balance-proof.ts";
import { recoverAttestationSigner } from "../../../src/common/attestation.ts";
import { conditionKind } from "@avn/protocol/attestation-kinds";
import { describeGovernance } from "./governance-suite.ts";
import { describeIntegratorsKit, startPreparingKitExample } from "./kit-suite.ts";
import { describeNodeImage } from "./node-image-suite.ts";
import { logFileEnd, nodeLogLine, startTestVerificationNetwork } from "../../helpers/network.ts";
import { devnetProvider } from "../../../src/devnet/op-devnet.ts";
import { JobStatus } from "@avn/protocol/constants";
import { ATTESTATION_DOMAIN_NAME, ATTESTATION_DOMAIN_VERSION } from "@avn/protocol/attestation";
import { CONDITION_SIGNED_PRIMARY_TYPE, conditionHash, LICENSED_CONDITION_ATTESTATION_TYPES } from "@avn/protocol/conditions";

// One devnet and network for all groups: governance first (its last test restores the parameters), the
// integrators' kit, then the node tests, some of which stop a node or move a license for good.
describe("end to end on the local network: governance, and circuit nodes answering on-chain jobs", function () {
  this.timeout(240_000);
  let test: TestDevnet;
  let network: VerificationNetwork;
  let stack: StackFile;
  let l1: JsonRpcProvider;
  let l2: JsonRpcProvider;
  let registry: ReturnType<typeof VerificationRegistry__factory.connect>;
  let kitExample: ReturnType<typeof startPreparingKitExample> | undefined;

  before(async function () {
    // The kit's example is packed, installed and compiled by child processes while the devnet starts.
    kitExample = startPreparingKitExample();
    // L2 blocks every second, not every 2 s as on the live rollup: what is checked here (votes, quorum,
    // restarts, governance, attestations) does not depend on the block time, and each wait for a block halves.
    test = await startTestDevnet({ deploy: true, l2BlockTime: 1 });
    const { devnet } = test;
    // Delegation is re-read at each heartbeat tick: often here, so a transfer shows within the test.
    ({ network, stack } = await startTestVerificationNetwork(test, "network", {
      HEARTBEAT_INTERVAL_SECONDS: "3",
      POLL_INTERVAL_MS: "500",
    }));
    l1 = devnetProvider(devnet.l1.rpcUrl, devnet.l1.chainId);
    l2 = devnetProvider(devnet.l2.rpcUrl, devnet.l2.chainId);
    registry = VerificationRegistry__factory.connect(stack.contracts!.l2!.VerificationRegistry, l2);
  });
  after(async function () {
    l1?.destroy();
    l2?.destroy();
    await network?.stop();
    await test?.stop();
    await kitExample?.remove();
  });

  /**
   * Every demo holding of both chains that a job and a balance attestation can ask for, with the query
   * that asks for it: ERC-1155 balances are signed only inside verdicts (docs/conditions.md).
   */
  const demoQueries = () => [
    ...stack
      .demo!.evm.filter((entry) => entry.kind !== "erc1155")
      .map((entry) => ({
        entry,
        query: { chain: "evm" as const, user_address: entry.user_address, contract_address: entry.contract_address },
      })),
    ...stack.demo!.svm.map((entry) => ({
      entry,
      query: { chain: "svm" as const, owner_address: entry.owner_address, token_mint_address: entry.token_mint_address },
    })),
  ];

  /** Every license vote cast on `jobId`, by license id. */
  const votesOn = async (jobId: bigint) =>
    (await registry.queryFilter(registry.filters.VoteSubmitted(jobId))).map((event) => event.args.licenseId);

  describeGovernance(() => ({ stack, l1, l2, votesOn }));
  // Before the node tests, which stop nodes and move licenses: the example's attestation needs the quorum.
  describeIntegratorsKit(() => ({ stack, l2, kitExample: kitExample!.ready }));
  describeNodeImage(() => ({ test, stack, l2, network }));

  describe("circuit nodes answer on-chain jobs", function () {
    it("finalizes jobs for EVM and Solana demo holdings with the API's answer and the seeded balance", async function () {
      const queries = demoQueries();
      for (const { entry, query } of queries) {
        const result = await verifyOnChainAndByApi(stack, l2, query);
        expect(result.onChain.balance, `${entry.kind} ${entry.note}`).to.equal(BigInt(entry.balance));
        expect(result.api.balance, `${entry.kind} ${entry.note}`).to.equal(BigInt(entry.balance));
        // The registry keeps the hash of the QueryResult the API serves.
        expect(result.onChain.queryResultHash, `${entry.kind} ${entry.note}`).to.equal(result.api.queryResultHash);
        expect((await votesOn(result.jobId)).length).to.be.at.least(2);
      }
    });

    it("answers ?attest=true for every demo holding with an attestation the deployed verifier accepts, and recording it sets latestBalance", async function () {
      const queries = demoQueries();
      for (const { entry, query } of queries) {
        const attested = await attestAndRecord(stack, l2, query);
        const label = `${entry.kind} ${entry.note}`;
        expect(attested.valid, label).to.equal(true);
        expect(attested.attestation.balance, label).to.equal(BigInt(entry.balance));
        expect(attested.licenseIds.length, label).to.be.at.least(
          Number(await NodeRegistry__factory.connect(stack.contracts!.l2!.NodeRegistry, l2).quorum()),
        );
        // Recorded after the job of the previous test finalized: the attestation is now the latest result.
        expect(attested.latest, label).to.deep.equal({ balance: BigInt(entry.balance), jobId: 0n });
        // Each subject's first recording, the network's first among them: no fee slot is written from zero.
        // (A bar on the deployed bytecode: under coverage the instrumented contracts spend more.)
        if (!hre.globalOptions.coverage) expect(attested.recordGas, label).to.be.at.most(110_000n);
      }
    });

    it("records 30 fresh attestations in a row from a default ethers wallet (exact estimate, no override) without a failure, each subject at one gas figure", async function () {
      // Every license's fee account was opened when it was delegated (the owner's set-up), so no recording
      // pays a fee slot's first write: each costs at most 110,000 gas, a subject's first included.
      const licenseIds = stack.nodes!.flatMap((node) => node.licenseIds.map(BigInt));
      for (const id of licenseIds) expect(await registry.isLicenseAccountOpen(id), `license ${id}'s account`).to.equal(true);

      const result = await recordInARow(stack, l2, { count: 30 });
      expect(result.failures).to.deep.equal([]);
      expect(result.recorded).to.equal(30);
      for (const recording of result.recordings) {
        expect(recording.gasUsed!, `recording ${recording.index}`).to.be.at.most(recording.estimate!);
        if (!hre.globalOptions.coverage) expect(recording.gasUsed!, `recording ${recording.index}`).to.be.at.most(110_000n);
      }

      // A subject's first recording writes its slot from zero. After it (the test before made it; the loop's
      // first of each subject is left out too, so that this test also holds when run alone), what the
      // contracts spend, gas used less the intrinsic 21,000 and calldata, is one figure per subject and
      // number of signing licenses. Gas used itself is not: it moves by 12 gas for each zero byte the
      // random signatures happen to hold (seen: 92,457 to 92,805 for 64,513 spent by the contracts).
      const figures = new Map<string, Set<bigint>>();
      const seen = new Set<string>();
      let compared = 0;
      for (const recording of result.recordings) {
        const firstInLoop = !seen.has(recording.subject);
        seen.add(recording.subject);
        if (firstInLoop) continue;
        const key = `${recording.subject}, ${recording.licenseIds.length} licenses, ${recording.signatures} signatures`;
        figures.set(key, (figures.get(key) ?? new Set()).add(recording.gasUsed! - recording.intrinsicGas!));
        ++compared;
      }
      for (const [key, spent] of figures) expect([...spent], key).to.have.lengthOf(1);
      expect(compared).to.equal(30 - seen.size);
    });

    it("lets a verified holder claim the example game item", async function () {
      const claim = await claimGameItem(stack, l2);
      expect(claim.verifiedBalance).to.equal(BigInt(stack.demo!.evm[0].balance));
      expect(claim.tokenId).to.equal(1n);
    });

    it("answers the ERC-1155 demo holdings by token_id, exactly above 2^53", async function () {
      const entries = stack.demo!.evm.filter((entry) => entry.kind === "erc1155");
      expect(entries).to.have.length.of.at.least(2);
      for (const entry of entries) {
        const query: DemoQuery = {
          chain: "evm",
          user_address: entry.user_address,
          contract_address: entry.contract_address,
          token_id: entry.token_id,
        };
        const text = await postToApi(stack, query);
        expect(/"balance":(\d+)/.exec(text)![1], entry.note).to.equal(entry.balance);
      }
    });

    it("answers every demo condition with its verdict, signed by a quorum that viem, ethers and the deployed verifier accept", async function () {
      const conditions = stack.demo!.conditions!;
      expect(conditions.map((condition) => condition.verdict)).to.include.members([true, false]);
      const domainOf = (chainId: bigint) => ({
        name: ATTESTATION_DOMAIN_NAME,
        version: ATTESTATION_DOMAIN_VERSION,
        chainId,
        verifyingContract: stack.contracts!.l2!.AttestationVerifier as `0x${string}`,
      });
      for (const condition of conditions) {
        const evaluated = await evaluateDemoCondition(stack, l2, condition.request, true);
        expect(evaluated.verdict, condition.note).to.equal(condition.verdict);
        expect(evaluated.conditionHash, condition.note).to.equal(conditionHash(condition.request.condition));
        expect(evaluated.leaves === undefined, condition.note).to.equal(condition.request.reveal === false);
        const { attestation, signatures, valid } = evaluated.signed!;
        expect(valid, condition.note).to.equal(true);
        expect(attestation.verdict).to.equal(condition.verdict);
        const domain = domainOf(BigInt(stack.l2!.chainId));
        for (const { signer, licenseIds, signature } of signatures) {
          const message = { attestation: { ...attestation }, licenseIds };
          expect(
            await viemVerifyTypedData({
              address: signer as `0x${string}`,
              domain,
              types: LICENSED_CONDITION_ATTESTATION_TYPES,
              primaryType: CONDITION_SIGNED_PRIMARY_TYPE,
              message: message as never,
              signature: signature as `0x${string}`,
            }),
          ).to.equal(true);
          expect(recoverAttestationSigner(conditionKind, domain, attestation, licenseIds, signature)).to.equal(signer);
        }
        // Unsigned, the same verdict.
        expect((await evaluateDemoCondition(stack, l2, condition.request, false)).verdict, condition.note).to.equal(condition.verdict);
      }
    });

    it("exports a signed demo verdict to EAS once, attested by the exporter, and refuses anyone else's attestation of its schema", async function () {
      const condition = stack.demo!.conditions![0];
      const { signed } = await evaluateDemoCondition(stack, l2, condition.request, true);
      const exported = await exportVerdictToEas(stack, l2, signed!);
      const exporter = AttestationExporter__factory.connect(stack.contracts!.l2!.AttestationExporter, l2);
      expect(exported.gasUsed !== undefined, "a first export is a transaction").to.equal(true);
      expect([exported.attester, exported.schema, exported.recipient]).to.deep.equal([
        await exporter.getAddress(),
        await exporter.CONDITION_SCHEMA_UID(),
        ZeroAddress,
      ]);
      const { conditionHash, ownersHash, verdict, ethereumBlock, solanaSlot, issuedAt } = signed!.attestation;
      expect(exported.data).to.equal(
        AbiCoder.defaultAbiCoder().encode(
          ["bytes32", "bytes32", "bool", "uint64", "uint64", "uint64"],
          [conditionHash, ownersHash, verdict, ethereumBlock, solanaSlot, issuedAt],
        ),
      );
      expect(await exporter.CONDITION_SCHEMA_UID()).to.equal(
        solidityPackedKeccak256(["string", "address", "bool"], [await exporter.CONDITION_SCHEMA(), await exporter.getAddress(), false]),
      );
      // The same verdict again: its first UID, nothing sent.
      const again = await exportVerdictToEas(stack, l2, signed!);
      expect(again.uid).to.equal(exported.uid);
      expect(again.gasUsed === undefined, "nothing sent again").to.equal(true);
      expect(await attestDirectlyOnEas(stack, l2)).to.equal("InvalidAttestation");
    });

    it("counts a cold wallet's demo ERC-721 for a hot wallet it delegated to (delegate.xyz), in answers and in a signed verdict, until revoked", async function () {
      const demo = await runDelegationDemo(stack, l1, l2);
      const held = BigInt(stack.demo!.evm.find((entry) => entry.kind === "erc721")!.balance);
      expect(held > 0n).to.equal(true);
      expect(demo.delegated).to.deep.equal({ withDelegations: held, without: 0n, wallets: [demo.cold], verdict: true, verdictValid: true });
      expect(demo.revoked).to.deep.equal({ withDelegations: 0n, without: 0n, wallets: [], verdict: false, verdictValid: true });
    });

    it("lets the demo collector claim a game item with a verdict once, and no one else with its verdict", async function () {
      const game = GameItem__factory.connect(stack.contracts!.l2!.GameItem, l2);
      const claim = await claimItemWithVerdict(stack, l2);
      expect(await game.ownerOf(claim.tokenId)).to.equal(stack.accounts!.demoCollector.address);
      expect(await game.solanaOwnerClaimed(claim.solanaOwner)).to.equal(true);
      // The same verdict again, and another player carrying it: the verdict names the collector's wallets.
      const { signed } = await evaluateDemoCondition(stack, l2, stack.demo!.conditions![0].request, true);
      const collector = new NonceManager(new Wallet(stack.accounts!.demoCollector.privateKey, l2));
      await expect(
        game.connect(collector).claimWithCondition(signed!.attestation, signed!.signatures, claim.solanaOwner),
      ).to.be.revertedWithCustomError(game, "GameItem_AlreadyClaimed");
      // (The demo's empty wallet: it has claimed nothing, so the owners check is what refuses it.)
      const player = new NonceManager(new Wallet(devAccount(8).privateKey, l2));
      await expect(
        game.connect(player).claimWithCondition(signed!.attestation, signed!.signatures, claim.solanaOwner),
      ).to.be.revertedWithCustomError(game, "GameItem_WrongOwners");
    });

    it("proves each EVM demo holding with ?proof=true (a zero one by exclusion), verifiable by a transaction sent later; a changed byte, another owner or a block the L2 does not know reverts", async function () {
      const verifier = StorageProofVerifier__factory.connect(stack.contracts!.l2!.StorageProofVerifier, l2);
      const hashes = L1BlockHashes__factory.connect(stack.contracts!.l2!.L1BlockHashes, l2);
      const proofType = [
        "tuple(bytes header, bytes[] accountProof, tuple(bool included, bytes[] nodes)[] slotProofs, tuple(bytes anchorHeader, bytes[] accountProof, bytes[] slotProof) history)",
      ];
      const coder = AbiCoder.defaultAbiCoder();
      const failure = (token: string, owner: string, slot: bigint, encoded: string) =>
        verifier.verifyBalance(token, owner, slot, 3_600n, encoded).then(
          () => "no revert",
          (error: { revert?: { name: string } }) => error.revert?.name ?? "an unnamed revert",
        );
      const flip = (node: string) =>
        `${dataSlice(node, 0, 20)}${(Number(dataSlice(node, 20, 21)) ^ 0x01).toString(16).padStart(2, "0")}${dataSlice(node, 21).slice(2)}`;
      let proven: { token: string; owner: string; slot: bigint } | undefined;
      for (const entry of stack.demo!.evm.filter((holding) => holding.kind !== "erc1155")) {
        const text = await postToApi(
          stack,
          { chain: "evm", user_address: entry.user_address, contract_address: entry.contract_address },
          "?proof=true",
        );
        const balance = BigInt(/"balance":(\d+)/.exec(text)![1]);
        expect(balance, entry.note).to.equal(BigInt(entry.balance));
        const { proof } = (
          JSON.parse(text) as { data: { proof: { blockNumber: number; balancesSlot: string; included: boolean; encoded: string } } }
        ).data;
        // A zero balance has no slot in the trie: its proof shows the slot absent (docs/proofs.md).
        expect(proof.included, entry.note).to.equal(balance !== 0n);
        const slot = BigInt(proof.balancesSlot);
        // The answer names a block the keeper recorded: it verifies after L1Block moves on, as a
        // transaction estimated now and mined later needs (the L1 keeps its 2-second blocks here).
        expect((await hashes.hashOf(proof.blockNumber))[0], entry.note).to.not.equal(ZeroHash);
        await test.devnet.l1Attributes.caughtUp(proof.blockNumber + 2);
        const [value, block] = await verifier.verifyBalance(entry.contract_address, entry.user_address, slot, 3_600n, proof.encoded);
        expect([value, block], entry.note).to.deep.equal([balance, BigInt(proof.blockNumber)]);
        await verifier.verifyBalance.estimateGas(entry.contract_address, entry.user_address, slot, 3_600n, proof.encoded);
        if (balance === 0n) continue;
        expect(await failure(entry.contract_address, devAccount(8).address, slot, proof.encoded)).to.match(
          /^StorageProofVerifier_(InclusionClaimMismatch|SlotProofInvalid)$/,
        );
        // One byte changed in a node of the storage proof, then of the account proof: a named error, never another balance.
        type Parts = [string, string[], [boolean, string[]][], [string, string[], string[]]];
        const [[header, accountProof, [[included, storageProof]], history]] = coder.decode(proofType, proof.encoded) as unknown as [Parts];
        const plain = (value: unknown): unknown => (Array.isArray(value) ? [...value].map(plain) : value);
        for (const changed of [
          [header, accountProof, [[included, [...storageProof.slice(0, -1), flip(storageProof.at(-1)!)]]], plain(history)],
          [header, [flip(accountProof[0]), ...accountProof.slice(1)], [[included, [...storageProof]]], plain(history)],
        ])
          expect(await failure(entry.contract_address, entry.user_address, slot, coder.encode(proofType, [changed])), entry.note).to.match(
            /^StorageProofVerifier_/,
          );
        proven = { token: entry.contract_address, owner: entry.user_address, slot };
      }
      // The block before the keeper's first record, long past: no longer one the L2 knows.
      const [first] = await hashes.queryFilter(hashes.filters.L1BlockRecorded(), 0);
      const unknown = await buildBalanceProof(
        { request: (method, params) => l1.send(method, params) },
        { token: proven!.token, owner: proven!.owner, balancesSlot: proven!.slot, blockNumber: first.args.number - 1n },
      );
      expect(await failure(proven!.token, proven!.owner, proven!.slot, unknown.encoded)).to.equal("StorageProofVerifier_UnknownBlock");
    });

    it("has every node probe the API, its sources and its peers and report it: GET /api/network/status, medians of 3 reporters", async function () {
      // Three attested rounds of this test's own, so that every node has seen its peers sign whatever ran before.
      for (const { query } of demoQueries().slice(0, 3)) await postToApi(stack, query, "?attest=true");
      const licenses = stack.nodes!.flatMap((node) => node.licenseIds).sort((a, b) => a - b);
      // Probes every 10 s about the jobs of the last 300 blocks (the tests above opened some), reports every 30 s.
      const status = await eventually(
        async () => {
          const response = await fetch(`${stack.api!.baseUrl}/api/network/status`, { headers: { authorization: stack.api!.apiKey } });
          expect(response.status).to.equal(200);
          return (await response.json()) as NetworkStatus;
        },
        (body) =>
          body.reporters === 3 &&
          body.api !== null &&
          body.api.probes >= 3 &&
          // Each license as its two peers saw it: the node and the hub's rounds, crossing the API's two workers.
          licenses.every((licenseId) => body.peers.some((peer) => peer.licenseId === licenseId && peer.reporters === 2)),
        120_000,
      );
      console.log(`      (status: ${JSON.stringify(status)})`);
      expect(status.api!.correctBps).to.equal(10_000);
      expect(status.api!.errorBps).to.equal(0);
      expect(status.api!.latencyP50Ms).to.be.above(0);
      expect(status.sources!.evmLatencyP50Ms).to.be.above(0);
      // A node of an earlier test (the node image's) may be listed too: the stack's three must be.
      const stackPeers = status.peers.filter((peer) => licenses.includes(peer.licenseId));
      expect(stackPeers.map((peer) => peer.licenseId)).to.deep.equal(licenses);
      for (const peer of stackPeers) {
        expect(peer.roundsObserved, `license ${peer.licenseId}`).to.be.at.least(3);
        expect(peer.signedBps, `license ${peer.licenseId}`).to.be.above(0);
        expect(peer.medianSigningMs, `license ${peer.licenseId}`).to.be.above(0);
      }
    });

    it("publishes a node paused while 3 jobs finalize: its participation and score fall, the two others vote on each (GET /api/network/nodes)", async function () {
      const nodesNow = async () => {
        const response = await fetch(`${stack.api!.baseUrl}/api/network/nodes`, { headers: { authorization: stack.api!.apiKey } });
        expect(response.status).to.equal(200);
        const body = (await response.json()) as NetworkNodes;
        return (licenseId: number) => body.nodes.find((node) => node.licenseId === licenseId)!;
      };
      const [first, paused, third] = stack.nodes!.map((node) => node.licenseIds[0]);
      const figuresBefore = await nodesNow();
      const before = figuresBefore(paused);
      const [evm] = stack.demo!.evm;
      const query = { chain: "evm" as const, user_address: evm.user_address, contract_address: evm.contract_address };
      // The node's own process (the stack file's pid): stopped, it neither answers nor beats, and stays live
      // (its last beat is within the liveness window), so the jobs are asked of it.
      process.kill(stack.nodes![1].pid, "SIGSTOP");
      try {
        for (let job = 0; job < 3; job++) await verifyOnChainAndByApi(stack, l2, query);
      } finally {
        process.kill(stack.nodes![1].pid, "SIGCONT");
      }
      const figures = await nodesNow();
      const after = figures(paused);
      for (const [licenseId, role] of [
        [first, "running"],
        [paused, "paused"],
        [third, "running"],
      ] as const) {
        const node = figures(licenseId);
        console.log(
          `      (license ${licenseId}, ${role}: asked ${node.jobsAsked}, votes ${node.votes}, participation ${node.participationBps} bps, score ${node.scoreBps} bps)`,
        );
      }
      expect(after.jobsAsked - before.jobsAsked, "jobs asked of the paused license").to.be.at.least(3);
      // What the pause decides, and nothing else: with quorum 2, every job while it lasted needed both running nodes'
      // votes and none of the paused one's. (How the earlier jobs' votes split among three live nodes is a race of
      // who answers first, which a comparison of whole-epoch figures between nodes would inherit.)
      expect(after.participationBps, `participation of the paused license ${paused}`).to.be.below(before.participationBps);
      expect(after.scoreBps, `score of the paused license ${paused}`).to.be.below(before.scoreBps);
      for (const other of [first, third]) {
        const [then, now] = [figuresBefore(other), figures(other)];
        expect(now.votes - then.votes, `votes of license ${other} while ${paused} was paused`).to.be.at.least(3);
        expect(after.votes - before.votes, `votes of the paused license against ${other}'s`).to.be.below(now.votes - then.votes);
        expect(now.participationBps, `participation of license ${other}`).to.be.at.least(then.participationBps);
      }
    });

    it("still finalizes jobs with one of the three nodes killed mid-run", async function () {
      const [evm] = stack.demo!.evm;
      const pending = verifyOnChainAndByApi(stack, l2, {
        chain: "evm",
        user_address: evm.user_address,
        contract_address: evm.contract_address,
      });
      await network.nodes[2].stop("SIGKILL");
      const first = await pending;
      const [svm] = stack.demo!.svm;
      const second = await verifyOnChainAndByApi(stack, l2, {
        chain: "svm",
        owner_address: svm.owner_address,
        token_mint_address: svm.token_mint_address,
      });
      expect(first.onChain.balance).to.equal(BigInt(evm.balance));
      expect(second.onChain.balance).to.equal(BigInt(svm.balance));
      expect(await votesOn(second.jobId)).to.not.include(BigInt(stack.nodes![2].licenseIds[0]));
    });

    it("keeps finalizing jobs while a hostile owner lends one of a node's two licenses away to vote and takes it back", async function () {
      // Node 3 is down (previous test): every job needs node 1 and node 2. Node 1's owner buys a second
      // license for it, then around each job lends the first one to an operator of its own, votes a wrong
      // answer with it there, and delegates it back: in the first rounds while node 1 is paused (so the
      // wrong vote lands first, for sure), in the later ones racing node 1's batch for the same job.
      const owner = stack.accounts!.nodeOwner1;
      const [lent] = stack.nodes![0].licenseIds.map(BigInt);
      const node1 = stack.nodes![0].burner;
      const ownerSigner = new NonceManager(new Wallet(owner.privateKey, l2));
      const hostileOperator = new NonceManager(new Wallet(devAccount(5).privateKey, l2));
      const contracts = stack.contracts!.l2!;
      const license = NodeLicense__factory.connect(contracts.NodeLicense, ownerSigner);
      const nodeRegistry = NodeRegistry__factory.connect(contracts.NodeRegistry, ownerSigner);
      const price = await license.quote(1n);
      await (await PrimaryToken__factory.connect(contracts.PrimaryToken, ownerSigner).approve(contracts.NodeLicense, price)).wait();
      const second = eventArgs(await (await license.buy(1n, price)).wait(), "LicensesPurchased").firstId as bigint;
      await (await nodeRegistry.delegate([second], node1)).wait();
      // Node 1 runs both licenses before the first job (its delegation watcher logs the new one).
      const votesFor = (line: string) => {
        if (!line.startsWith("{")) return [];
        const { msg, licenses } = JSON.parse(line) as { msg: string; licenses?: string[] };
        return msg === "voting for licenses" ? (licenses ?? []) : [];
      };
      await eventually(
        async () => (await network.nodes[0].logLines()).some((line) => votesFor(line).includes(String(second))),
        Boolean,
        30_000,
      );

      const consumer = new NonceManager(new Wallet(stack.accounts!.consumer.privateKey, l2));
      const [evm] = stack.demo!.evm;
      const jobIds: bigint[] = [];
      let hostileVotes = 0;
      const requestedFrom = await l2.getBlockNumber();
      const rounds = 4;
      const pausedRounds = 2;
      for (let round = 0; round < rounds; round += 1) {
        if (round < pausedRounds) network.nodes[0].child.kill("SIGSTOP");
        const requested = await (await registry.connect(consumer).requestEvmBalance(evm.user_address, evm.contract_address)).wait();
        const jobId = eventArgs(requested, "VerificationRequested").jobId as bigint;
        jobIds.push(jobId);
        // The dance, sent at once so that it lands in one block, as close to node 1's batch as it can.
        const wrong = {
          jobId,
          licenseIds: [lent],
          owner: zeroPadValue(evm.user_address, 32),
          asset: zeroPadValue(evm.contract_address, 32),
          balance: BigInt(evm.balance) + 1n,
          queryResultHash: ZeroHash,
          sourceBlock: 1n,
        };
        const dance = [
          await nodeRegistry.delegate([lent], await hostileOperator.getAddress()),
          await NodeRegistry__factory.connect(contracts.NodeRegistry, hostileOperator)["heartbeat()"](),
          await registry.connect(hostileOperator).submitResults([wrong], { gasLimit: 500_000n }),
          await nodeRegistry.delegate([lent], node1),
        ];
        const receipts = await Promise.all(dance.map((tx) => tx.wait().catch(() => undefined)));
        if (receipts[2]?.logs.some((log) => registry.interface.parseLog(log)?.name === "VoteSubmitted")) hostileVotes += 1;
        if (round < pausedRounds) network.nodes[0].child.kill("SIGCONT");
      }
      expect(hostileVotes).to.be.at.least(pausedRounds);
      for (const jobId of jobIds) {
        try {
          await eventually(
            async () => (await registry.getResult(jobId)).status,
            (status) => status === JobStatus.finalized,
            60_000,
          );
        } catch (error) {
          // What the nodes did, to tell why the job stayed open.
          const votes = (await registry.queryFilter(registry.filters.VoteSubmitted(jobId))).map(
            (event) => `${event.args.licenseId}:${event.args.operator}`,
          );
          const ignored = (await registry.queryFilter(registry.filters.SubmissionIgnored(jobId))).map(
            (event) => `${event.args.operator}:${event.args.reason}`,
          );
          const logs = [...(await network.nodes[0].logLines()).slice(-25), "---", ...(await network.nodes[1].logLines()).slice(-15)];
          throw new Error(`job ${jobId} not finalized; votes ${votes.join(", ")}; ignored ${ignored.join(", ")}\n${logs.join("\n")}`, {
            cause: error,
          });
        }
        expect((await registry.getResult(jobId)).balance).to.equal(BigInt(evm.balance));
      }
      // Whatever won each race, no batch of node 1 reverted.
      const node1Transactions = [];
      for (let block = requestedFrom; block <= (await l2.getBlockNumber()); block += 1) {
        for (const tx of (await l2.getBlock(block, true))!.prefetchedTransactions) {
          if (tx.from.toLowerCase() === node1.toLowerCase() && tx.to?.toLowerCase() === contracts.VerificationRegistry.toLowerCase())
            node1Transactions.push(tx.hash);
        }
      }
      for (const hash of node1Transactions) expect((await l2.getTransactionReceipt(hash))!.status, hash).to.equal(1);
      console.log(`      (the hostile operator's vote landed on ${hostileVotes} of ${jobIds.length} jobs)`);
    });

    it("never submits twice for a job and license, across a restart", async function () {
      // The stack names each node's own process (what `kill -STOP` pauses), and a restart's new one.
      const before = stack.nodes![2].pid;
      expect(stack.nodes!.map((node) => node.pid)).to.deep.equal(network.nodes.map((node) => node.child.pid));
      // Node 3 alone answers a job (the others are stopped): one vote, no quorum, the job stays open.
      await network.restartNode(2);
      expect(stack.nodes![2].pid).to.equal(network.nodes[2].child.pid).and.not.equal(before);
      const commandLine = await readFile(`/proc/${stack.nodes![2].pid}/cmdline`, "utf8");
      expect(
        commandLine.split("\0").some((part) => part.endsWith(path.join("scripts", "node.ts"))),
        commandLine,
      ).to.equal(true);
      await Promise.all([network.nodes[0].stop(), network.nodes[1].stop()]);
      const consumer = new NonceManager(new Wallet(stack.accounts!.consumer.privateKey, l2));
      const [svm] = stack.demo!.svm;
      const receipt = await (
        await registry.connect(consumer).requestSvmBalance(solanaBytes32(svm.owner_address), solanaBytes32(svm.token_mint_address))
      ).wait();
      const jobId = (await registry.nextJobId()) - 1n;
      const license3 = BigInt(stack.nodes![2].licenseIds[0]);
      await eventually(
        () => votesOn(jobId),
        (votes) => votes.includes(license3),
        60_000,
      );

      // Restarted on the same cache, with its scan position erased so that it reads the job's block again,
      // node 3 must leave the job alone.
      const restartBlock = await l2.getBlockNumber();
      await network.nodes[2].stop();
      const journal = new DatabaseSync(path.join(network.nodes[2].cacheDir, STATE_FILE));
      journal.prepare("DELETE FROM meta WHERE key = 'cursor'").run();
      journal.close();
      const { logFile } = network.nodes[2];
      const restartedFrom = await logFileEnd(logFile);
      const { pid } = (await network.restartNode(2)).child;
      expect(stack.nodes![2].pid).to.equal(pid);
      // Its scan has read the job's block again, up to the head: that pass is over, and whatever it submitted
      // was sent and logged before this line. (Later passes start past the job's block.) Lines by the new
      // process only (pino's pid): the old one's last lines may reach the file after it exited.
      const { line: scanned, before: restartedLog } = await nodeLogLine(
        logFile,
        restartedFrom,
        (entry) => entry.pid === pid && entry.msg === "scanned up to the L2 head" && Number(entry.toBlock) >= receipt!.blockNumber,
      );
      expect(Number(scanned.fromBlock), "the restarted node's scan began at or before the job's block").to.be.at.most(receipt!.blockNumber);
      const resubmitted = restartedLog.filter(
        (entry) => entry.pid === pid && entry.msg === "submitted job answers" && (entry.jobs as string[]).includes(String(jobId)),
      );
      expect(resubmitted, "the restarted node's submissions for the job").to.deep.equal([]);
      expect((await registry.getJob(jobId)).status).to.equal(JobStatus.open);

      // The others come back and finalize it; every license voted once, and node 3 sent nothing for it again.
      await Promise.all([network.restartNode(0), network.restartNode(1)]);
      await eventually(
        async () => (await registry.getJob(jobId)).status,
        (status) => status !== JobStatus.open,
        60_000,
      );
      const votes = await votesOn(jobId);
      expect(new Set(votes.map(String)).size).to.equal(votes.length);
      expect(votes).to.include(license3);
      const burner3 = stack.nodes![2].burner.toLowerCase();
      // From the block after the one the first vote was seen in: everything node 3 sent since its restart.
      for (let block = restartBlock + 1; block <= (await l2.getBlockNumber()); block += 1) {
        for (const tx of (await l2.getBlock(block, true))!.prefetchedTransactions) {
          if (tx.from.toLowerCase() !== burner3 || tx.to?.toLowerCase() !== stack.contracts!.l2!.VerificationRegistry.toLowerCase())
            continue;
          const call = registry.interface.parseTransaction(tx)!;
          const jobIds = (call.args[0] as Array<{ jobId: bigint }>).map((submission) => submission.jobId);
          expect(jobIds, `transaction ${tx.hash} of the restarted node`).to.not.include(jobId);
          expect((await l2.getTransactionReceipt(tx.hash))!.status).to.equal(1);
        }
      }
      expect(receipt!.status).to.equal(1);
    });

    it("stops counting a node whose license was transferred", async function () {
      const owner2 = stack.accounts!.nodeOwner2;
      const license2 = BigInt(stack.nodes![1].licenseIds[0]);
      const license = NodeLicense__factory.connect(stack.contracts!.l2!.NodeLicense, new NonceManager(new Wallet(owner2.privateKey, l2)));
      await (await license.transferFrom(owner2.address, devAccount(6).address, license2)).wait();
      await eventually(
        async () => (await network.nodes[1].logLines()).some((line) => line.includes("no longer delegated")),
        Boolean,
        30_000,
      );
      const [evm] = stack.demo!.evm;
      const result = await verifyOnChainAndByApi(stack, l2, {
        chain: "evm",
        user_address: evm.user_address,
        contract_address: evm.contract_address,
      });
      expect(result.onChain.balance).to.equal(BigInt(evm.balance));
      expect(await votesOn(result.jobId)).to.not.include(license2);
    });

    it("expires a job nobody answers and refunds its fee", async function () {
      await Promise.all(network.nodes.map((node) => node.stop()));
      const consumer = new NonceManager(new Wallet(stack.accounts!.consumer.privateKey, l2));
      const before = await registry.collateralOf(stack.accounts!.consumer.address);
      const [evm] = stack.demo!.evm;
      await (await registry.connect(consumer).requestEvmBalance(evm.user_address, evm.contract_address)).wait();
      const jobId = (await registry.nextJobId()) - 1n;
      const fee = (await registry.getJob(jobId)).fee;
      expect((await registry.collateralOf(stack.accounts!.consumer.address)).available).to.equal(before.available - fee);
      await l2.send("evm_increaseTime", [Number(await registry.jobTimeout()) + 1]);
      await l2.send("evm_mine", []);
      const expired = eventArgs(await (await registry.connect(consumer).expireJob(jobId)).wait(), "JobExpired");
      expect([...expired]).to.deep.equal([jobId, stack.accounts!.consumer.address, fee]);
      expect((await registry.collateralOf(stack.accounts!.consumer.address)).available).to.equal(before.available);
      expect(await votesOn(jobId)).to.deep.equal([]);
    });

    it("names each node's burner in its start log and never logs a key", async function () {
      for (const [index, node] of network.nodes.entries()) {
        const { privateKey } = JSON.parse(await readFile(path.join(node.cacheDir, BURNER_FILE), "utf8")) as { privateKey: string };
        const lines = await node.logLines();
        const named = lines.filter((line) => line.startsWith("{")).map((line) => JSON.parse(line) as { msg: string; burner?: string });
        expect(named.some(({ msg, burner }) => msg === "burner wallet" && burner === stack.nodes![index].burner)).to.equal(true);
        const everything = lines.join("\n").toLowerCase();
        expect(everything).to.not.include(privateKey.slice(2).toLowerCase());
        expect(everything).to.not.include(network.apiKey.toLowerCase());
      }
    });
  });
});

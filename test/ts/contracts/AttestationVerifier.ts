import { expect } from "chai";
import { encodeBase58, Signature } from "ethers";
import { network } from "hardhat";
import { hashTypedData as viemHashTypedData, verifyTypedData as viemVerifyTypedData, type Hex } from "viem";

import {
  attestationDigest,
  attestationDomain,
  attestationFromJson,
  attestationToJson,
  recoverAttestationSigner,
} from "../../../src/common/attestation.ts";
import { balanceKind } from "@avn/protocol/attestation-kinds";
import {
  BALANCE_ATTESTATION_TYPE,
  BALANCE_ATTESTATION_TYPES,
  LICENSED_BALANCE_ATTESTATION_TYPE,
  LICENSED_BALANCE_ATTESTATION_TYPES,
  MAX_ATTESTATION_LICENSES,
  SIGNED_PRIMARY_TYPE,
  type BalanceAttestation,
  type NodeSignature,
} from "@avn/protocol/attestation";
import {
  CONDITION_ATTESTATION_TYPE,
  CONDITION_ATTESTATION_TYPES,
  CONDITION_SIGNED_PRIMARY_TYPE,
  LICENSED_CONDITION_ATTESTATION_TYPE,
  LICENSED_CONDITION_ATTESTATION_TYPES,
  ownersHash,
  type ConditionAttestation,
} from "@avn/protocol/conditions";
import { attestationOf, deployAttestationFixture, signAll } from "../../helpers/attestations.ts";
import { LIVENESS_WINDOW, REQUEST_FEE } from "../../helpers/protocol.ts";

const { ethers, networkHelpers } = await network.create();
const { loadFixture, time } = networkHelpers;

const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const MAX_AGE = 3_600n;
/** A Solana owner: its public key's 32 bytes, and their base58 spelling. */
const SOLANA_OWNER_BYTES = "0x5a1a5a1a5a1a5a1a5a1a5a1a5a1a5a1a5a1a5a1a5a1a5a1a5a1a5a1a5a1a5a1a";
const SOLANA_OWNER = encodeBase58(SOLANA_OWNER_BYTES);

const fixture = () => deployAttestationFixture(ethers);

type Fixture = Awaited<ReturnType<typeof fixture>>;

/** An attestation signed by the first two nodes (quorum 2 of 3). */
async function quorumSigned(f: Fixture, fields: Partial<BalanceAttestation> = {}) {
  const attestation = await attestationOf(ethers, fields);
  const signatures = await signAll(f.domain, attestation, f.nodes.slice(0, 2));
  return { attestation, signatures };
}

/** Expects both answers of the verifier: `false` from the view, and `error` from the checking call. */
async function expectInvalid(f: Fixture, attestation: BalanceAttestation, signatures: NodeSignature[], error: string, args?: unknown[]) {
  expect(await f.attestationVerifier.isAttestationValid(attestation, signatures, MAX_AGE)).to.equal(false);
  const check = expect(f.attestationVerifier.checkAttestation(attestation, signatures, MAX_AGE)).to.be.revertedWithCustomError(
    f.attestationVerifier,
    error,
  );
  if (args) await check.withArgs(...args);
  else await check;
}

describe("AttestationVerifier", function () {
  describe("one definition on both sides", function () {
    it("has the TypeScript types' type hashes, domain and digest", async function () {
      const f = await loadFixture(fixture);
      expect(await f.attestationVerifier.BALANCE_ATTESTATION_TYPEHASH()).to.equal(ethers.id(BALANCE_ATTESTATION_TYPE));
      expect(await f.attestationVerifier.LICENSED_BALANCE_ATTESTATION_TYPEHASH()).to.equal(ethers.id(LICENSED_BALANCE_ATTESTATION_TYPE));
      const encoder = ethers.TypedDataEncoder.from(mutable(LICENSED_BALANCE_ATTESTATION_TYPES));
      expect(encoder.primaryType).to.equal(SIGNED_PRIMARY_TYPE);
      expect(encoder.encodeType("BalanceAttestation")).to.equal(BALANCE_ATTESTATION_TYPE);
      expect(encoder.encodeType(SIGNED_PRIMARY_TYPE)).to.equal(LICENSED_BALANCE_ATTESTATION_TYPE);
      expect(LICENSED_BALANCE_ATTESTATION_TYPE).to.equal(
        `LicensedBalanceAttestation(BalanceAttestation attestation,uint256[] licenseIds)${BALANCE_ATTESTATION_TYPE}`,
      );
      expect(await f.attestationVerifier.MAX_LICENSES()).to.equal(BigInt(MAX_ATTESTATION_LICENSES));
      const domain = await f.attestationVerifier.eip712Domain();
      expect([domain.name, domain.version, domain.chainId, domain.verifyingContract]).to.deep.equal([
        f.domain.name,
        f.domain.version,
        f.domain.chainId,
        f.verifierAddress,
      ]);
      const attestation = await attestationOf(ethers, { chain: 1, balance: 2n ** 255n, sourceBlock: 2n ** 64n - 1n });
      for (const licenseIds of [[], [7n], [3n, 1n, 2n ** 96n - 1n]]) {
        expect(await f.attestationVerifier.hashAttestation(attestation, licenseIds)).to.equal(
          attestationDigest(balanceKind, f.domain, attestation, licenseIds),
        );
      }
    });

    it("serves JSON that viem's and ethers' typed-data verification accept as it is, and parses back", async function () {
      const f = await loadFixture(fixture);
      const { attestation, signatures } = await quorumSigned(f, { balance: 2n ** 70n });
      const json = JSON.parse(JSON.stringify(attestationToJson(balanceKind, f.domain, attestation, signatures)));
      expect(json.message.balance).to.equal((2n ** 70n).toString());
      for (const { signer, licenseIds, signature } of json.signatures) {
        // What a client does with the documented JSON: the message and the signature's own license ids.
        const message = { attestation: json.message, licenseIds };
        expect(ethers.verifyTypedData(json.domain, mutable(LICENSED_BALANCE_ATTESTATION_TYPES), message, signature)).to.equal(signer);
        const viemValid = await viemVerifyTypedData({
          address: signer,
          domain: json.domain,
          types: LICENSED_BALANCE_ATTESTATION_TYPES,
          primaryType: "LicensedBalanceAttestation",
          message,
          signature,
        });
        expect(viemValid).to.equal(true);
      }
      const parsed = attestationFromJson(balanceKind, json);
      expect(parsed.attestation).to.deep.equal(attestation);
      expect(await f.attestationVerifier.isAttestationValid(parsed.attestation, parsed.signatures, MAX_AGE)).to.equal(true);
    });

    it("recovers signers in TypeScript as the contract does: none for a malleable or malformed signature, another for other licenses", async function () {
      const f = await loadFixture(fixture);
      const { attestation, signatures } = await quorumSigned(f);
      const [{ signer, licenseIds, signature }] = signatures;
      expect(recoverAttestationSigner(balanceKind, f.domain, attestation, licenseIds, signature)).to.equal(signer);
      expect(recoverAttestationSigner(balanceKind, f.domain, attestation, [...licenseIds, 4n], signature)).to.not.equal(signer);
      expect(recoverAttestationSigner(balanceKind, f.domain, attestation, licenseIds, malleable(signature))).to.equal(undefined);
      expect(recoverAttestationSigner(balanceKind, f.domain, attestation, licenseIds, "0x1234")).to.equal(undefined);
    });
  });

  describe("deployment", function () {
    it("reads the node registry from the verification registry, and refuses none", async function () {
      const f = await loadFixture(fixture);
      expect(await f.attestationVerifier.REGISTRY()).to.equal(await f.registry.getAddress());
      expect(await f.attestationVerifier.NODE_REGISTRY()).to.equal(await f.nodeRegistry.getAddress());
      const factory = await ethers.getContractFactory("AttestationVerifier");
      await expect(factory.deploy(ethers.ZeroAddress)).to.be.revertedWithCustomError(factory, "AttestationVerifier_ZeroAddress");
    });
  });

  describe("isAttestationValid", function () {
    it("accepts distinct live licenses reaching the quorum, one signer with several licenses included", async function () {
      const f = await loadFixture(fixture);
      const { attestation, signatures } = await quorumSigned(f);
      expect(await f.attestationVerifier.isAttestationValid(attestation, signatures, MAX_AGE)).to.equal(true);
      await f.attestationVerifier.checkAttestation(attestation, signatures, MAX_AGE);
      // Alice's burner runs a second license: alone it now covers the quorum of 2.
      await f.license.connect(f.alice).buy(1n, ethers.MaxUint256); // id 4
      await f.nodeRegistry.connect(f.alice).delegate([4n], f.burnerA.address);
      const [both] = await signAll(f.domain, attestation, [{ burner: f.burnerA, licenseIds: [1n, 4n] }]);
      expect(await f.attestationVerifier.isAttestationValid(attestation, [both], MAX_AGE)).to.equal(true);
    });

    it("fails short of the quorum, and with no signature at all", async function () {
      const f = await loadFixture(fixture);
      const { attestation, signatures } = await quorumSigned(f);
      await expectInvalid(f, attestation, signatures.slice(0, 1), "AttestationVerifier_QuorumNotReached", [1n, 2n]);
      await expectInvalid(f, attestation, [], "AttestationVerifier_QuorumNotReached", [0n, 2n]);
      // The quorum is the node registry's current one.
      await f.nodeRegistry.connect(f.admin).setQuorum(3n);
      await expectInvalid(f, attestation, signatures, "AttestationVerifier_QuorumNotReached", [2n, 3n]);
    });

    it("fails on a duplicate license, within one signature or across two", async function () {
      const f = await loadFixture(fixture);
      const attestation = await attestationOf(ethers);
      const [twice] = await signAll(f.domain, attestation, [{ burner: f.burnerA, licenseIds: [1n, 1n] }]);
      await expectInvalid(f, attestation, [twice], "AttestationVerifier_DuplicateLicense", [1n]);
      const [a] = await signAll(f.domain, attestation, [{ burner: f.burnerA, licenseIds: [1n] }]);
      await expectInvalid(f, attestation, [a, a], "AttestationVerifier_DuplicateLicense", [1n]);
    });

    it("fails on a license not delegated to its signer, transferred, or whose signer stopped beating", async function () {
      const f = await loadFixture(fixture);
      const attestation = await attestationOf(ethers);
      // Burner A claims bob's license 2.
      const claimed = await signAll(f.domain, attestation, [
        { burner: f.burnerA, licenseIds: [1n] },
        { burner: f.burnerA, licenseIds: [2n] },
      ]);
      await expectInvalid(f, attestation, claimed, "AttestationVerifier_LicenseNotDelegated", [2n, f.burnerA.address]);
      // An id that equals license 1 in its low 96 bits is not license 1 (nor any license): one license never counts twice.
      const aliased = await signAll(f.domain, attestation, [{ burner: f.burnerA, licenseIds: [1n, 1n + 2n ** 96n] }]);
      await expectInvalid(f, attestation, aliased, "AttestationVerifier_LicenseNotDelegated", [1n + 2n ** 96n, f.burnerA.address]);
      // Bob sells license 2: its delegation is void.
      const { signatures } = await quorumSigned(f, attestation);
      await f.license.connect(f.bob).transferFrom(f.bob.address, f.outsider.address, 2n);
      await expectInvalid(f, attestation, signatures, "AttestationVerifier_LicenseNotDelegated", [2n, f.burnerB.address]);
      // Liveness: past the window without a heartbeat (the attestation itself stays young enough).
      const fresh = await loadFixture(fixture);
      const young = await quorumSigned(fresh, { issuedAt: BigInt(await time.latest()) + LIVENESS_WINDOW });
      await time.increase(LIVENESS_WINDOW + 1n);
      await fresh.nodeRegistry.connect(fresh.burnerA)["heartbeat()"]();
      await expectInvalid(fresh, young.attestation, young.signatures, "AttestationVerifier_LicenseNotLive", [2n]);
    });

    it("fails on a wrong signer, another struct, or a struct signed for another chain id or contract", async function () {
      const f = await loadFixture(fixture);
      const { attestation, signatures } = await quorumSigned(f);
      const byOutsider = await signAll(f.domain, attestation, [{ burner: f.outsider, licenseIds: [1n] }]);
      await expectInvalid(
        f,
        attestation,
        [{ ...byOutsider[0], signer: f.burnerA.address }, signatures[1]],
        "AttestationVerifier_WrongSigner",
        [0n, f.outsider.address],
      );
      await expectInvalid(f, { ...attestation, balance: 184n }, signatures, "AttestationVerifier_WrongSigner");
      for (const domain of [
        attestationDomain(f.domain.chainId + 1n, f.verifierAddress),
        attestationDomain(f.domain.chainId, f.outsider.address),
      ]) {
        const foreign = await signAll(domain, attestation, f.nodes.slice(0, 2));
        await expectInvalid(f, attestation, foreign, "AttestationVerifier_WrongSigner");
      }
    });

    it("fails on a malleable (high-s) twin and on malformed signatures", async function () {
      const f = await loadFixture(fixture);
      const { attestation, signatures } = await quorumSigned(f);
      await expectInvalid(
        f,
        attestation,
        [{ ...signatures[0], signature: malleable(signatures[0].signature) }, signatures[1]],
        "AttestationVerifier_MalleableSignature",
        [0n],
      );
      for (const bad of [signatures[1].signature.slice(0, 130), `${signatures[1].signature}00`, `0x${"00".repeat(65)}`]) {
        await expectInvalid(
          f,
          attestation,
          [signatures[0], { ...signatures[1], signature: bad }],
          "AttestationVerifier_MalformedSignature",
          [1n],
        );
      }
    });

    it("fails when stale, issued ahead of the clock, without licenses, with too many, or for an unknown chain", async function () {
      const f = await loadFixture(fixture);
      const now = BigInt(await time.latest());
      const stale = await quorumSigned(f, { issuedAt: now - MAX_AGE - 1n });
      await expectInvalid(f, stale.attestation, stale.signatures, "AttestationVerifier_StaleAttestation", [now - MAX_AGE - 1n, MAX_AGE]);
      const skew = await f.attestationVerifier.MAX_CLOCK_SKEW();
      // A view call's block may be a block or two behind the L2 head the hub stamped: up to the skew is fine.
      const ahead = await quorumSigned(f, { issuedAt: now + skew + 10n });
      await expectInvalid(f, ahead.attestation, ahead.signatures, "AttestationVerifier_IssuedInFuture", [now + skew + 10n]);
      const slightlyAhead = await quorumSigned(f, { issuedAt: now + skew });
      expect(await f.attestationVerifier.isAttestationValid(slightlyAhead.attestation, slightlyAhead.signatures, MAX_AGE)).to.equal(true);
      const { attestation, signatures } = await quorumSigned(f);
      const [none] = await signAll(f.domain, attestation, [{ burner: f.burnerB, licenseIds: [] }]);
      await expectInvalid(f, attestation, [signatures[0], none], "AttestationVerifier_NoLicenses", [1n]);
      const many = Array.from({ length: 17 }, (_, i) => BigInt(i + 1));
      const [tooMany] = await signAll(f.domain, attestation, [{ burner: f.burnerA, licenseIds: many }]);
      await expectInvalid(f, attestation, [tooMany], "AttestationVerifier_TooManyLicenses", [17n]);
      const unknown = await quorumSigned(f, { chain: 2 as 0 });
      await expectInvalid(f, unknown.attestation, unknown.signatures, "AttestationVerifier_UnknownChain", [2n]);
    });
  });

  describe("each signature binds its licenses", function () {
    /** Quorum 3; a stranger buys licenses 4 and 5 and delegates them to burner A, whose operator never agreed. */
    async function padded() {
      const f = await loadFixture(fixture);
      await f.nodeRegistry.connect(f.admin).setQuorum(3n);
      await f.license.connect(f.outsider).buy(2n, ethers.MaxUint256); // ids 4 and 5
      await f.nodeRegistry.connect(f.outsider).delegate([4n, 5n], f.burnerA.address);
      const attestation = await attestationOf(ethers);
      const [alone] = await signAll(f.domain, attestation, [{ burner: f.burnerA, licenseIds: [1n] }]);
      return { f, attestation, alone };
    }

    it("refuses a stranger's licenses delegated to a signer and appended to its list, and names why", async function () {
      const { f, attestation, alone } = await padded();
      // One operator's one signature, padded to three licenses by whoever carries it: not a quorum of 3.
      const padding = { ...alone, licenseIds: [1n, 4n, 5n] };
      await expectInvalid(f, attestation, [padding], "AttestationVerifier_WrongSigner");
      const recovered = recoverAttestationSigner(balanceKind, f.domain, attestation, padding.licenseIds, padding.signature);
      await expect(f.attestationVerifier.checkAttestation(attestation, [padding], MAX_AGE))
        .to.be.revertedWithCustomError(f.attestationVerifier, "AttestationVerifier_WrongSigner")
        .withArgs(0n, recovered);
      // The padded signature pays nobody at recording: the fee cannot be steered to the padded licenses.
      await expect(f.attestationVerifier.connect(f.consumer).recordAttestation(attestation, [padding])).to.be.revertedWithCustomError(
        f.attestationVerifier,
        "AttestationVerifier_WrongSigner",
      );
      for (const licenseId of [1n, 4n, 5n]) expect(await f.registry.claimableFees(licenseId)).to.equal(0n);
      // With the quorum's two other signatures the honest set records, and pays the three signers alone.
      const others = await signAll(f.domain, attestation, f.nodes.slice(1, 3));
      await f.attestationVerifier.connect(f.consumer).recordAttestation(attestation, [alone, ...others]);
      for (const licenseId of [1n, 2n, 3n]) expect(await f.registry.claimableFees(licenseId)).to.be.greaterThan(0n);
      for (const licenseId of [4n, 5n]) expect(await f.registry.claimableFees(licenseId)).to.equal(0n);
    });

    it("refuses a license moved from one signer's list to another's, and a reordered list", async function () {
      const f = await loadFixture(fixture);
      await f.license.connect(f.alice).buy(1n, ethers.MaxUint256); // id 4, alice's second license
      await f.nodeRegistry.connect(f.alice).delegate([4n], f.burnerB.address);
      const attestation = await attestationOf(ethers);
      const [a, b] = await signAll(f.domain, attestation, [
        { burner: f.burnerA, licenseIds: [1n] },
        { burner: f.burnerB, licenseIds: [2n, 4n] },
      ]);
      expect(await f.attestationVerifier.isAttestationValid(attestation, [a, b], MAX_AGE)).to.equal(true);
      // License 4 taken from B's list and given to A's: each list differs from what its signer signed.
      await expectInvalid(
        f,
        attestation,
        [
          { ...a, licenseIds: [1n, 4n] },
          { ...b, licenseIds: [2n] },
        ],
        "AttestationVerifier_WrongSigner",
      );
      // Even the same licenses in another order are not what B signed.
      await expectInvalid(f, attestation, [a, { ...b, licenseIds: [4n, 2n] }], "AttestationVerifier_WrongSigner", [
        1n,
        recoverAttestationSigner(balanceKind, f.domain, attestation, [4n, 2n], b.signature),
      ]);
    });

    it("refuses a signature made before licenses were signed (over the bare BalanceAttestation)", async function () {
      const f = await loadFixture(fixture);
      const attestation = await attestationOf(ethers);
      const bare = { BalanceAttestation: [...BALANCE_ATTESTATION_TYPES.BalanceAttestation] };
      const signatures = await Promise.all(
        f.nodes.slice(0, 2).map(async ({ burner, licenseIds }) => ({
          signer: burner.address,
          licenseIds,
          signature: await burner.signTypedData(f.domain, bare, attestation),
        })),
      );
      await expectInvalid(f, attestation, signatures, "AttestationVerifier_WrongSigner");
    });
  });

  describe("recordAttestation", function () {
    it("charges the caller's collateral, pays the signing licenses, and becomes the latest balance", async function () {
      const f = await loadFixture(fixture);
      const { attestation, signatures } = await quorumSigned(f, { balance: 2n ** 200n });
      const before = await f.registry.collateralOf(f.consumer.address);
      await expect(f.attestationVerifier.connect(f.consumer).recordAttestation(attestation, signatures))
        .to.emit(f.registry, "AttestationRecorded")
        .withArgs(
          f.consumer.address,
          0,
          attestation.owner,
          attestation.asset,
          2n ** 200n,
          attestation.queryResultHash,
          attestation.sourceBlock,
          attestation.issuedAt,
          REQUEST_FEE,
          // The signing licenses, named for the quality-of-service figures (docs/verification.md).
          [1n, 2n],
        );
      expect((await f.registry.collateralOf(f.consumer.address)).available).to.equal(before.available - REQUEST_FEE);
      expect(await f.registry.claimableFees(1n)).to.equal(REQUEST_FEE / 2n);
      expect(await f.registry.claimableFees(2n)).to.equal(REQUEST_FEE / 2n);
      expect(await f.registry.claimableFees(3n)).to.equal(0n); // carol's node did not sign
      // Signatures are not votes on jobs: the vote statistics stay as they were.
      expect(await f.registry.voteStatsOf(1n)).to.deep.equal([0n, 0n]);
      const latest = await f.registry.latestBalance(0, attestation.owner, attestation.asset);
      expect([latest.balance, latest.sourceBlock, latest.finalizedAt, latest.jobId]).to.deep.equal([
        2n ** 200n,
        attestation.sourceBlock,
        attestation.issuedAt,
        0n,
      ]);
      // Paid like a job's fee: claiming burns the staked fee and stakes its backing for the owner.
      await expect(f.registry.connect(f.alice).claimFees([1n]))
        .to.emit(f.registry, "FeesClaimed")
        .withArgs(1n, f.alice.address, REQUEST_FEE / 2n);
    });

    it("refuses an attestation not newer than the stored one, without charging", async function () {
      const f = await loadFixture(fixture);
      const first = await quorumSigned(f, { balance: 5n });
      await f.attestationVerifier.connect(f.consumer).recordAttestation(first.attestation, first.signatures);
      const collateral = await f.registry.collateralOf(f.consumer.address);
      const same = await quorumSigned(f, { balance: 6n, issuedAt: first.attestation.issuedAt });
      await expect(f.attestationVerifier.connect(f.consumer).recordAttestation(same.attestation, same.signatures))
        .to.be.revertedWithCustomError(f.registry, "VerificationRegistry_AttestationNotNewer")
        .withArgs(first.attestation.issuedAt, first.attestation.issuedAt);
      expect(await f.registry.collateralOf(f.consumer.address)).to.deep.equal(collateral);
      const later = await quorumSigned(f, { balance: 7n, issuedAt: first.attestation.issuedAt + 1n });
      await f.attestationVerifier.connect(f.consumer).recordAttestation(later.attestation, later.signatures);
      expect((await f.registry.latestBalance(0, later.attestation.owner, later.attestation.asset)).balance).to.equal(7n);
    });

    it("refuses an issue time after the block's, which then cannot block an honest newer attestation", async function () {
      const f = await loadFixture(fixture);
      const now = BigInt(await time.latest());
      // Within the views' skew, so a view accepts it; recording it would let it outrank what comes next.
      const ahead = await quorumSigned(f, { balance: 1n, issuedAt: now + 3n });
      expect(await f.attestationVerifier.isAttestationValid(ahead.attestation, ahead.signatures, MAX_AGE)).to.equal(true);
      await networkHelpers.time.setNextBlockTimestamp(now + 2n);
      await expect(f.attestationVerifier.connect(f.consumer).recordAttestation(ahead.attestation, ahead.signatures))
        .to.be.revertedWithCustomError(f.attestationVerifier, "AttestationVerifier_IssuedInFuture")
        .withArgs(now + 3n);
      const honest = await quorumSigned(f, { balance: 2n, issuedAt: BigInt(await time.latest()) });
      await f.attestationVerifier.connect(f.consumer).recordAttestation(honest.attestation, honest.signatures);
      expect((await f.registry.latestBalance(0, honest.attestation.owner, honest.attestation.asset)).balance).to.equal(2n);
      // At its issue time exactly, an attestation records.
      await networkHelpers.time.setNextBlockTimestamp(now + 3n);
      await f.attestationVerifier.connect(f.consumer).recordAttestation(ahead.attestation, ahead.signatures);
      expect((await f.registry.latestBalance(0, ahead.attestation.owner, ahead.attestation.asset)).balance).to.equal(1n);
    });

    it("keeps latestBalance on whichever of a finalized job and a recorded attestation came later", async function () {
      const f = await loadFixture(fixture);
      const { attestation, signatures } = await quorumSigned(f, { balance: 5n });
      await f.attestationVerifier.connect(f.consumer).recordAttestation(attestation, signatures);
      // A job for the same holding finalizes after the attestation was issued: it is the latest.
      await f.registry
        .connect(f.consumer)
        .requestEvmBalance(ethers.dataSlice(attestation.owner, 12), ethers.dataSlice(attestation.asset, 12));
      await time.increase(5n);
      for (const node of f.nodes.slice(0, 2)) {
        await f.registry.connect(node.burner).submitResults([
          {
            jobId: 1n,
            licenseIds: node.licenseIds,
            owner: attestation.owner,
            asset: attestation.asset,
            balance: 9n,
            queryResultHash: ethers.ZeroHash,
            sourceBlock: 1n,
          },
        ]);
      }
      expect((await f.registry.latestBalance(0, attestation.owner, attestation.asset)).jobId).to.equal(1n);
      // A newer attestation wins again.
      const newer = await quorumSigned(f, { balance: 11n, issuedAt: BigInt(await time.latest()) + 1n });
      await time.increase(2n);
      for (const node of f.nodes) await f.nodeRegistry.connect(node.burner)["heartbeat()"]();
      await f.attestationVerifier.connect(f.consumer).recordAttestation(newer.attestation, newer.signatures);
      const latest = await f.registry.latestBalance(0, attestation.owner, attestation.asset);
      expect([latest.balance, latest.jobId]).to.deep.equal([11n, 0n]);
    });

    it("refuses a caller without enough collateral, an invalid attestation, and anyone but the verifier at the registry", async function () {
      const f = await loadFixture(fixture);
      const { attestation, signatures } = await quorumSigned(f);
      await expect(f.attestationVerifier.connect(f.outsider).recordAttestation(attestation, signatures)).to.be.revertedWithCustomError(
        f.registry,
        "VerificationRegistry_InsufficientCollateral",
      );
      await expect(f.attestationVerifier.connect(f.consumer).recordAttestation(attestation, signatures.slice(0, 1)))
        .to.be.revertedWithCustomError(f.attestationVerifier, "AttestationVerifier_QuorumNotReached")
        .withArgs(1n, 2n);
      await expect(f.attestationVerifier.connect(f.consumer).recordAttestation(attestation, [])).to.be.revertedWithCustomError(
        f.attestationVerifier,
        "AttestationVerifier_QuorumNotReached",
      );
      const result = { ...attestation };
      await expect(f.registry.connect(f.consumer).recordAttestedResult(f.consumer.address, result, [1n, 2n])).to.be.revertedWithCustomError(
        f.registry,
        "AccessControlUnauthorizedAccount",
      );
      // An attestation older than the recording limit verifies for a caller who accepts its age, but is not recorded.
      const limit = await f.attestationVerifier.MAX_RECORD_AGE();
      const old = await quorumSigned(f, { issuedAt: BigInt(await time.latest()) - limit - 1n });
      expect(await f.attestationVerifier.isAttestationValid(old.attestation, old.signatures, limit * 2n)).to.equal(true);
      await expect(
        f.attestationVerifier.connect(f.consumer).recordAttestation(old.attestation, old.signatures),
      ).to.be.revertedWithCustomError(f.attestationVerifier, "AttestationVerifier_StaleAttestation");
    });
  });
});

describe("AttestationVerifier: condition verdicts", function () {
  /** A verdict about an Ethereum owner and a linked Solana owner, issued at the latest block's time. */
  async function conditionOf(fields: Partial<ConditionAttestation> = {}): Promise<ConditionAttestation> {
    return {
      conditionHash: ethers.id("holds 100 of the token on Ethereum and 1 of the mint on Solana"),
      ownersHash: ownersHash({ ethereum: "0x1111111111111111111111111111111111111111", solana: SOLANA_OWNER }),
      verdict: true,
      ethereumBlock: 1_000n,
      solanaSlot: 2_000n,
      issuedAt: BigInt(await time.latest()),
      ...fields,
    };
  }

  /** Each node signs the verdict with ethers' `signTypedData` over the protocol's definitions, as a circuit node would. */
  async function signCondition(f: Fixture, attestation: ConditionAttestation, nodes = f.nodes.slice(0, 2)): Promise<NodeSignature[]> {
    return Promise.all(
      nodes.map(async ({ burner, licenseIds }) => ({
        signer: burner.address,
        licenseIds,
        signature: await burner.signTypedData(f.domain, mutable(LICENSED_CONDITION_ATTESTATION_TYPES), { attestation, licenseIds }),
      })),
    );
  }

  /** Expects the verdict to be invalid: `false` from the view, `error` from the checking call. */
  async function expectConditionInvalid(
    f: Fixture,
    attestation: ConditionAttestation,
    signatures: NodeSignature[],
    error: string,
    args?: unknown[],
  ) {
    expect(await f.attestationVerifier.isConditionAttestationValid(attestation, signatures, MAX_AGE)).to.equal(false);
    const check = expect(f.attestationVerifier.checkConditionAttestation(attestation, signatures, MAX_AGE)).to.be.revertedWithCustomError(
      f.attestationVerifier,
      error,
    );
    if (args) await check.withArgs(...args);
    else await check;
  }

  it("has the protocol's type hashes, and hashes a verdict as ethers and viem do", async function () {
    const f = await loadFixture(fixture);
    expect(await f.attestationVerifier.CONDITION_ATTESTATION_TYPEHASH()).to.equal(
      ethers.keccak256(ethers.toUtf8Bytes(CONDITION_ATTESTATION_TYPE)),
    );
    expect(await f.attestationVerifier.LICENSED_CONDITION_ATTESTATION_TYPEHASH()).to.equal(
      ethers.keccak256(ethers.toUtf8Bytes(LICENSED_CONDITION_ATTESTATION_TYPE)),
    );
    const encoder = ethers.TypedDataEncoder.from(mutable(LICENSED_CONDITION_ATTESTATION_TYPES));
    expect(encoder.primaryType).to.equal(CONDITION_SIGNED_PRIMARY_TYPE);
    expect(encoder.encodeType("ConditionAttestation")).to.equal(CONDITION_ATTESTATION_TYPE);
    expect(encoder.encodeType(CONDITION_SIGNED_PRIMARY_TYPE)).to.equal(LICENSED_CONDITION_ATTESTATION_TYPE);
    expect(Object.keys(CONDITION_ATTESTATION_TYPES)).to.deep.equal(["ConditionAttestation"]);
    for (const verdict of [true, false]) {
      const attestation = await conditionOf({ verdict, ethereumBlock: 2n ** 64n - 1n, solanaSlot: 0n });
      for (const licenseIds of [[], [7n], [3n, 1n, 2n ** 96n - 1n]]) {
        const message = { attestation, licenseIds };
        const onChain = await f.attestationVerifier.hashConditionAttestation(attestation, licenseIds);
        expect(onChain).to.equal(ethers.TypedDataEncoder.hash(f.domain, mutable(LICENSED_CONDITION_ATTESTATION_TYPES), message));
        const viemDigest = viemHashTypedData({
          domain: { ...f.domain, verifyingContract: f.domain.verifyingContract as Hex },
          types: LICENSED_CONDITION_ATTESTATION_TYPES,
          primaryType: CONDITION_SIGNED_PRIMARY_TYPE,
          message: {
            attestation: { ...attestation, conditionHash: attestation.conditionHash as Hex, ownersHash: attestation.ownersHash as Hex },
            licenseIds,
          },
        });
        expect(onChain).to.equal(viemDigest);
      }
    }
    // A verdict's digest is never a balance attestation's, whatever the words: the licensed type hashes differ.
    expect(await f.attestationVerifier.LICENSED_CONDITION_ATTESTATION_TYPEHASH()).to.not.equal(
      await f.attestationVerifier.LICENSED_BALANCE_ATTESTATION_TYPEHASH(),
    );
  });

  it("accepts nodes' signTypedData signatures that viem and ethers verify, whatever the verdict", async function () {
    const f = await loadFixture(fixture);
    for (const verdict of [true, false]) {
      const attestation = await conditionOf({ verdict });
      const signatures = await signCondition(f, attestation);
      for (const { signer, licenseIds, signature } of signatures) {
        const message = { attestation, licenseIds };
        expect(ethers.verifyTypedData(f.domain, mutable(LICENSED_CONDITION_ATTESTATION_TYPES), message, signature)).to.equal(signer);
        const viemValid = await viemVerifyTypedData({
          address: signer as Hex,
          domain: { ...f.domain, verifyingContract: f.domain.verifyingContract as Hex },
          types: LICENSED_CONDITION_ATTESTATION_TYPES,
          primaryType: CONDITION_SIGNED_PRIMARY_TYPE,
          message: {
            attestation: { ...attestation, conditionHash: attestation.conditionHash as Hex, ownersHash: attestation.ownersHash as Hex },
            licenseIds,
          },
          signature: signature as Hex,
        });
        expect(viemValid).to.equal(true);
      }
      // Valid means signed and fresh: a quorum's "no" is valid, and the consumer reads the verdict.
      expect(await f.attestationVerifier.isConditionAttestationValid(attestation, signatures, MAX_AGE)).to.equal(true);
      await f.attestationVerifier.checkConditionAttestation(attestation, signatures, MAX_AGE);
    }
  });

  it("refuses another verdict, condition or owners, padded or duplicate licenses, short of the quorum, stale or early", async function () {
    const f = await loadFixture(fixture);
    const attestation = await conditionOf();
    const signatures = await signCondition(f, attestation);
    for (const changed of [
      { verdict: false },
      { conditionHash: ethers.id("another condition") },
      // The same Ethereum owner without its Solana owner.
      { ownersHash: ownersHash({ ethereum: "0x1111111111111111111111111111111111111111" }) },
    ]) {
      await expectConditionInvalid(f, { ...attestation, ...changed }, signatures, "AttestationVerifier_WrongSigner");
    }
    // Carol's live license appended to Bob's list: not what Bob signed.
    const padded = [signatures[0], { ...signatures[1], licenseIds: [2n, 3n] }];
    const recovered = ethers.recoverAddress(
      await f.attestationVerifier.hashConditionAttestation(attestation, [2n, 3n]),
      signatures[1].signature,
    );
    await expectConditionInvalid(f, attestation, padded, "AttestationVerifier_WrongSigner", [1n, recovered]);
    await expectConditionInvalid(f, attestation, [signatures[0], signatures[0]], "AttestationVerifier_DuplicateLicense", [1n]);
    await expectConditionInvalid(f, attestation, signatures.slice(0, 1), "AttestationVerifier_QuorumNotReached", [1n, 2n]);
    const now = BigInt(await time.latest());
    const stale = await conditionOf({ issuedAt: now - MAX_AGE - 1n });
    await expectConditionInvalid(f, stale, await signCondition(f, stale), "AttestationVerifier_StaleAttestation", [
      now - MAX_AGE - 1n,
      MAX_AGE,
    ]);
    const early = await conditionOf({ issuedAt: now + (await f.attestationVerifier.MAX_CLOCK_SKEW()) + 1n });
    await expectConditionInvalid(f, early, await signCondition(f, early), "AttestationVerifier_IssuedInFuture", [early.issuedAt]);
    await expectConditionInvalid(
      f,
      attestation,
      [{ ...signatures[0], signature: malleable(signatures[0].signature) }, signatures[1]],
      "AttestationVerifier_MalleableSignature",
      [0n],
    );
  });

  it("refuses a balance attestation's signatures, and verdict signatures for a balance", async function () {
    const f = await loadFixture(fixture);
    const balance = await attestationOf(ethers);
    const balanceSignatures = await signAll(f.domain, balance, f.nodes.slice(0, 2));
    const attestation = await conditionOf();
    await expectConditionInvalid(f, attestation, balanceSignatures, "AttestationVerifier_WrongSigner");
    await expectInvalid(f, balance, await signCondition(f, attestation), "AttestationVerifier_WrongSigner");
  });

  it("computes the owners hash as the contracts do: the Ethereum address left-padded, the Solana key's bytes, zero when absent", async function () {
    const coder = ethers.AbiCoder.defaultAbiCoder();
    const ethereum = "0x1111111111111111111111111111111111111111";
    expect(ownersHash({ ethereum, solana: SOLANA_OWNER })).to.equal(
      ethers.keccak256(coder.encode(["bytes32", "bytes32"], [ethers.zeroPadValue(ethereum, 32), SOLANA_OWNER_BYTES])),
    );
    expect(ownersHash({ ethereum })).to.equal(
      ethers.keccak256(coder.encode(["bytes32", "bytes32"], [ethers.zeroPadValue(ethereum, 32), ethers.ZeroHash])),
    );
  });
});

/** ethers wants mutable type arrays; the pinned definitions are `as const`. */
function mutable(
  types: Record<string, ReadonlyArray<{ name: string; type: string }>>,
): Record<string, Array<{ name: string; type: string }>> {
  return Object.fromEntries(Object.entries(types).map(([name, fields]) => [name, fields.map((field) => ({ ...field }))]));
}

/** The high-s twin of a 65-byte signature: same signer to a raw ecrecover, refused by the verifier. */
function malleable(signature: string): string {
  const parsed = Signature.from(signature);
  const s = SECP256K1_N - BigInt(parsed.s);
  const v = parsed.v === 27 ? 28 : 27;
  return ethers.concat([parsed.r, ethers.toBeHex(s, 32), ethers.toBeHex(v, 1)]);
}

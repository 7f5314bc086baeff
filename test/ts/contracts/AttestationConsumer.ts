import { expect } from "chai";
import { encodeBase58 } from "ethers";
import { network } from "hardhat";

import type { BalanceAttestation, NodeSignature } from "@avn/protocol/attestation";
import { conditionHash, ownersHash, type ConditionAttestation } from "@avn/protocol/conditions";
import { attestationOf, deployAttestationFixture, signAll, signConditionAll } from "../../helpers/attestations.ts";

const { ethers, networkHelpers } = await network.create();
const { loadFixture, time } = networkHelpers;

/** The consumer's maximum age: five minutes, within the nodes' liveness window (ten), so that only the age can lapse. */
const MAX_AGE = 300n;
/** What the consumer requires in the tests: at least 100 of the asset. */
const MIN_BALANCE = 100n;
/** A Solana owner: its public key's 32 bytes, and their base58 spelling. */
const SOLANA_OWNER_BYTES = "0x5a1a5a1a5a1a5a1a5a1a5a1a5a1a5a1a5a1a5a1a5a1a5a1a5a1a5a1a5a1a5a1a";
const SOLANA_OWNER = encodeBase58(SOLANA_OWNER_BYTES);
const CONDITION_HASH = conditionHash({
  all: [
    { chain: "ethereum", contract_address: "0x2222222222222222222222222222222222222222", min: "100" },
    { chain: "solana", token_mint_address: "So11111111111111111111111111111111111111112", min: "1" },
  ],
});

/**
 * The real protocol (module Protocol: quorum 2 of three live licenses), its real verifier, and a contract that
 * inherits AttestationConsumer with each internal check exposed.
 */
async function fixture() {
  const f = await deployAttestationFixture(ethers);
  const consumer = await ethers.deployContract("MockAttestationConsumer", [f.verifierAddress, MAX_AGE]);
  const holder = f.outsider;
  const asset = ethers.Wallet.createRandom().address; // an ERC-20 on Ethereum
  return { ...f, consumer, holder, asset };
}

type Fixture = Awaited<ReturnType<typeof fixture>>;

/** An attestation that `f.holder` holds `MIN_BALANCE` of `f.asset` on Ethereum, over `fields`, signed by two of the three nodes. */
async function holding(f: Fixture, fields: Partial<BalanceAttestation> = {}) {
  const attestation = await attestationOf(ethers, {
    owner: ethers.zeroPadValue(f.holder.address, 32),
    asset: ethers.zeroPadValue(f.asset, 32),
    balance: MIN_BALANCE,
    ...fields,
  });
  const signatures = await signAll(f.domain, attestation, f.nodes.slice(0, 2));
  return { attestation, signatures };
}

/** A "yes" verdict on `CONDITION_HASH` about `f.holder` and `SOLANA_OWNER`, over `fields`, signed by two of the three nodes. */
async function verdict(f: Fixture, fields: Partial<ConditionAttestation> = {}) {
  const attestation: ConditionAttestation = {
    conditionHash: CONDITION_HASH,
    ownersHash: ownersHash({ ethereum: f.holder.address, solana: SOLANA_OWNER }),
    verdict: true,
    ethereumBlock: 1_000n,
    solanaSlot: 2_000n,
    issuedAt: BigInt(await time.latest()),
    ...fields,
  };
  const signatures = await signConditionAll(f.domain, attestation, f.nodes.slice(0, 2));
  return { attestation, signatures };
}

describe("AttestationConsumer", function () {
  describe("deployment", function () {
    it("keeps the verifier and the maximum age it was given", async function () {
      const f = await loadFixture(fixture);
      expect(await f.consumer.ATTESTATION_VERIFIER()).to.equal(f.verifierAddress);
      expect(await f.consumer.MAX_ATTESTATION_AGE()).to.equal(MAX_AGE);
    });

    it("refuses a zero verifier and a zero maximum age, each by name", async function () {
      const f = await loadFixture(fixture);
      const factory = await ethers.getContractFactory("MockAttestationConsumer");
      await expect(factory.deploy(ethers.ZeroAddress, MAX_AGE)).to.be.revertedWithCustomError(factory, "AttestationConsumer_ZeroVerifier");
      await expect(factory.deploy(f.verifierAddress, 0n)).to.be.revertedWithCustomError(factory, "AttestationConsumer_ZeroMaxAge");
    });
  });

  describe("balance attestations: the validity views", function () {
    it("accepts a quorum-signed attestation in both views", async function () {
      const f = await loadFixture(fixture);
      const { attestation, signatures } = await holding(f);
      expect(await f.consumer.isBalanceAttestationValid(attestation, signatures)).to.equal(true);
      await f.consumer.requireValidBalanceAttestation(attestation, signatures);
    });

    it("refuses one short of the quorum: false from the view, the verifier's own error from the check", async function () {
      const f = await loadFixture(fixture);
      const { attestation, signatures } = await holding(f);
      expect(await f.consumer.isBalanceAttestationValid(attestation, signatures.slice(0, 1))).to.equal(false);
      await expect(f.consumer.requireValidBalanceAttestation(attestation, signatures.slice(0, 1)))
        .to.be.revertedWithCustomError(f.attestationVerifier, "AttestationVerifier_QuorumNotReached")
        .withArgs(1n, 2n);
    });

    it("accepts an attestation exactly MAX_ATTESTATION_AGE old and refuses one a second older, with the consumer's age", async function () {
      const f = await loadFixture(fixture);
      const issuedAt = BigInt(await time.latest()) + 10n;
      const { attestation, signatures } = await holding(f, { issuedAt });
      // Sent as transactions, so that the block time, hence the age, is exact.
      await time.setNextBlockTimestamp(issuedAt + MAX_AGE);
      await expect(f.consumer.requireValidBalanceAttestation.send(attestation, signatures)).to.not.be.revert(ethers);
      await time.setNextBlockTimestamp(issuedAt + MAX_AGE + 1n);
      await expect(f.consumer.requireValidBalanceAttestation.send(attestation, signatures))
        .to.be.revertedWithCustomError(f.attestationVerifier, "AttestationVerifier_StaleAttestation")
        .withArgs(issuedAt, MAX_AGE);
      // The view says no to one older than the age, which the verifier accepts under a longer one: the
      // consumer's age is the one used.
      const old = await holding(f, { issuedAt: BigInt(await time.latest()) - MAX_AGE - 1n });
      expect(await f.consumer.isBalanceAttestationValid(old.attestation, old.signatures)).to.equal(false);
      expect(await f.attestationVerifier.isAttestationValid(old.attestation, old.signatures, MAX_AGE * 2n)).to.equal(true);
    });
  });

  describe("_requireEvmHolding", function () {
    it("accepts an attestation that the owner holds at least the minimum of the asset on Ethereum", async function () {
      const f = await loadFixture(fixture);
      const exact = await holding(f);
      await f.consumer.requireEvmHolding(exact.attestation, exact.signatures, f.holder.address, f.asset, MIN_BALANCE);
      const more = await holding(f, { balance: 2n ** 200n });
      await f.consumer.requireEvmHolding(more.attestation, more.signatures, f.holder.address, f.asset, MIN_BALANCE);
    });

    it("refuses another chain, owner or asset, and a balance below the minimum, each by name", async function () {
      const f = await loadFixture(fixture);
      const holder = ethers.zeroPadValue(f.holder.address, 32);
      const asset = ethers.zeroPadValue(f.asset, 32);
      /** Signed by the quorum and valid: what `_requireEvmHolding` refuses is the subject, not the signatures. */
      const validHolding = async (fields: Partial<BalanceAttestation>) => {
        const signed = await holding(f, fields);
        expect(await f.consumer.isBalanceAttestationValid(signed.attestation, signed.signatures)).to.equal(true);
        return signed;
      };
      const requireHolding = ({ attestation, signatures }: { attestation: BalanceAttestation; signatures: NodeSignature[] }) =>
        f.consumer.requireEvmHolding(attestation, signatures, f.holder.address, f.asset, MIN_BALANCE);
      // The same 32 bytes on Solana are another account.
      await expect(requireHolding(await validHolding({ chain: 1 })))
        .to.be.revertedWithCustomError(f.consumer, "AttestationConsumer_WrongChain")
        .withArgs(1n);
      const someoneElse = ethers.zeroPadValue(f.alice.address, 32);
      await expect(requireHolding(await validHolding({ owner: someoneElse })))
        .to.be.revertedWithCustomError(f.consumer, "AttestationConsumer_WrongOwner")
        .withArgs(someoneElse, holder);
      // The holder's address with a dirty high byte, or right-padded, is not how attestations name it.
      for (const owner of [`0x01${holder.slice(4)}`, ethers.zeroPadBytes(f.holder.address, 32)]) {
        await expect(requireHolding(await validHolding({ owner })))
          .to.be.revertedWithCustomError(f.consumer, "AttestationConsumer_WrongOwner")
          .withArgs(owner, holder);
      }
      // The holder's balance of another token.
      const otherAsset = ethers.zeroPadValue(f.verifierAddress, 32);
      await expect(requireHolding(await validHolding({ asset: otherAsset })))
        .to.be.revertedWithCustomError(f.consumer, "AttestationConsumer_WrongAsset")
        .withArgs(otherAsset, asset);
      await expect(requireHolding(await validHolding({ balance: MIN_BALANCE - 1n })))
        .to.be.revertedWithCustomError(f.consumer, "AttestationConsumer_BalanceTooLow")
        .withArgs(MIN_BALANCE - 1n, MIN_BALANCE);
    });

    it("refuses the right subject without a quorum, or stale, with the verifier's error", async function () {
      const f = await loadFixture(fixture);
      const { attestation, signatures } = await holding(f);
      await expect(f.consumer.requireEvmHolding(attestation, signatures.slice(0, 1), f.holder.address, f.asset, MIN_BALANCE))
        .to.be.revertedWithCustomError(f.attestationVerifier, "AttestationVerifier_QuorumNotReached")
        .withArgs(1n, 2n);
      // A signature for a license its signer does not run (bob's, signed by an outsider): the verifier names it.
      const [, stranger] = await signAll(f.domain, attestation, [f.nodes[0], { burner: f.outsider, licenseIds: [2n] }]);
      await expect(f.consumer.requireEvmHolding(attestation, [signatures[0], stranger], f.holder.address, f.asset, MIN_BALANCE))
        .to.be.revertedWithCustomError(f.attestationVerifier, "AttestationVerifier_LicenseNotDelegated")
        .withArgs(2n, f.outsider.address);
      const issuedAt = BigInt(await time.latest()) - MAX_AGE - 1n;
      const stale = await holding(f, { issuedAt });
      await expect(f.consumer.requireEvmHolding(stale.attestation, stale.signatures, f.holder.address, f.asset, MIN_BALANCE))
        .to.be.revertedWithCustomError(f.attestationVerifier, "AttestationVerifier_StaleAttestation")
        .withArgs(issuedAt, MAX_AGE);
    });
  });

  describe("condition verdicts: the validity views", function () {
    it("accepts a quorum-signed verdict, a 'no' included, and refuses one short of the quorum with the verifier's error", async function () {
      const f = await loadFixture(fixture);
      for (const value of [true, false]) {
        const { attestation, signatures } = await verdict(f, { verdict: value });
        expect(await f.consumer.isConditionAttestationValid(attestation, signatures)).to.equal(true);
        await f.consumer.requireValidConditionAttestation(attestation, signatures);
        expect(await f.consumer.isConditionAttestationValid(attestation, signatures.slice(0, 1))).to.equal(false);
        await expect(f.consumer.requireValidConditionAttestation(attestation, signatures.slice(0, 1)))
          .to.be.revertedWithCustomError(f.attestationVerifier, "AttestationVerifier_QuorumNotReached")
          .withArgs(1n, 2n);
      }
    });

    it("accepts a verdict exactly MAX_ATTESTATION_AGE old and refuses one a second older", async function () {
      const f = await loadFixture(fixture);
      const issuedAt = BigInt(await time.latest()) + 10n;
      const { attestation, signatures } = await verdict(f, { issuedAt });
      await time.setNextBlockTimestamp(issuedAt + MAX_AGE);
      await expect(f.consumer.requireValidConditionAttestation.send(attestation, signatures)).to.not.be.revert(ethers);
      await time.setNextBlockTimestamp(issuedAt + MAX_AGE + 1n);
      await expect(f.consumer.requireValidConditionAttestation.send(attestation, signatures))
        .to.be.revertedWithCustomError(f.attestationVerifier, "AttestationVerifier_StaleAttestation")
        .withArgs(issuedAt, MAX_AGE);
      const old = await verdict(f, { issuedAt: BigInt(await time.latest()) - MAX_AGE - 1n });
      expect(await f.consumer.isConditionAttestationValid(old.attestation, old.signatures)).to.equal(false);
      expect(await f.attestationVerifier.isConditionAttestationValid(old.attestation, old.signatures, MAX_AGE * 2n)).to.equal(true);
    });
  });

  describe("_requireVerdict", function () {
    it("hashes the owners as the protocol package does: the address left-padded, the Solana key's bytes, zero when absent", async function () {
      const f = await loadFixture(fixture);
      expect(await f.consumer.ownersHashOf(f.holder.address, SOLANA_OWNER_BYTES)).to.equal(
        ownersHash({ ethereum: f.holder.address, solana: SOLANA_OWNER }),
      );
      expect(await f.consumer.ownersHashOf(f.holder.address, ethers.ZeroHash)).to.equal(ownersHash({ ethereum: f.holder.address }));
      expect(await f.consumer.evmAddressToBytes32(f.holder.address)).to.equal(ethers.zeroPadValue(f.holder.address, 32));
    });

    it("accepts a 'yes' on the condition about the owners", async function () {
      const f = await loadFixture(fixture);
      const { attestation, signatures } = await verdict(f);
      const owners = await f.consumer.ownersHashOf(f.holder.address, SOLANA_OWNER_BYTES);
      await f.consumer.requireVerdict(attestation, signatures, CONDITION_HASH, owners);
    });

    it("refuses another condition, other owners and a 'no', each by name", async function () {
      const f = await loadFixture(fixture);
      const owners = ownersHash({ ethereum: f.holder.address, solana: SOLANA_OWNER });
      const other = ethers.id("another condition");
      const wrongCondition = await verdict(f, { conditionHash: other });
      await expect(f.consumer.requireVerdict(wrongCondition.attestation, wrongCondition.signatures, CONDITION_HASH, owners))
        .to.be.revertedWithCustomError(f.consumer, "AttestationConsumer_WrongCondition")
        .withArgs(other, CONDITION_HASH);
      // The holder without its Solana owner is another pair of owners.
      const alone = ownersHash({ ethereum: f.holder.address });
      const wrongOwners = await verdict(f, { ownersHash: alone });
      await expect(f.consumer.requireVerdict(wrongOwners.attestation, wrongOwners.signatures, CONDITION_HASH, owners))
        .to.be.revertedWithCustomError(f.consumer, "AttestationConsumer_WrongOwners")
        .withArgs(alone, owners);
      // A quorum-signed, valid "no".
      const no = await verdict(f, { verdict: false });
      expect(await f.consumer.isConditionAttestationValid(no.attestation, no.signatures)).to.equal(true);
      await expect(f.consumer.requireVerdict(no.attestation, no.signatures, CONDITION_HASH, owners)).to.be.revertedWithCustomError(
        f.consumer,
        "AttestationConsumer_ConditionNotMet",
      );
    });

    it("refuses the right 'yes' without a quorum, or stale, with the verifier's error", async function () {
      const f = await loadFixture(fixture);
      const owners = ownersHash({ ethereum: f.holder.address, solana: SOLANA_OWNER });
      const { attestation, signatures } = await verdict(f);
      await expect(f.consumer.requireVerdict(attestation, signatures.slice(0, 1), CONDITION_HASH, owners))
        .to.be.revertedWithCustomError(f.attestationVerifier, "AttestationVerifier_QuorumNotReached")
        .withArgs(1n, 2n);
      const issuedAt = BigInt(await time.latest()) - MAX_AGE - 1n;
      const stale = await verdict(f, { issuedAt });
      await expect(f.consumer.requireVerdict(stale.attestation, stale.signatures, CONDITION_HASH, owners))
        .to.be.revertedWithCustomError(f.attestationVerifier, "AttestationVerifier_StaleAttestation")
        .withArgs(issuedAt, MAX_AGE);
    });
  });
});

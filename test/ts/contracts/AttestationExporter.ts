import { expect } from "chai";
import { AbiCoder, Contract, encodeBase58, solidityPackedKeccak256 } from "ethers";
import { network } from "hardhat";

import { balanceKind, conditionKind } from "@avn/protocol/attestation-kinds";
import type { BalanceAttestation } from "@avn/protocol/attestation";
import { ownersHash, type ConditionAttestation } from "@avn/protocol/conditions";
import { BALANCE_EAS_SCHEMA, CONDITION_EAS_SCHEMA } from "@avn/protocol/eas";
import { EAS_PREDEPLOYS } from "@avn/protocol/op-predeploys";
import { attestationStructHash } from "../../../src/common/attestation.ts";
import { easArtifact } from "../../../src/op/eas-artifacts.ts";
import { installEasPredeploys } from "../../../src/op/eas-predeploys.ts";
import { attestationOf, deployAttestationFixture, signAll, signConditionAll } from "../../helpers/attestations.ts";

const { ethers, networkHelpers } = await network.create();
const { loadFixture, time } = networkHelpers;

const coder = AbiCoder.defaultAbiCoder();
const BALANCE_TUPLE = "tuple(uint8,bytes32,bytes32,uint256,bytes32,uint64,uint64)";
const CONDITION_TUPLE = "tuple(bytes32,bytes32,bool,uint64,uint64,uint64)";
const SOLANA_OWNER = encodeBase58("0x5a1a5a1a5a1a5a1a5a1a5a1a5a1a5a1a5a1a5a1a5a1a5a1a5a1a5a1a5a1a5a1a");

/**
 * The real protocol (quorum 2 of three live licenses) and its verifier, EAS and its schema registry from the
 * pinned EAS package at the OP predeploy addresses, and the exporter over both.
 */
async function fixture() {
  const f = await deployAttestationFixture(ethers);
  await installEasPredeploys(ethers.provider, "hardhat");
  const exporter = await ethers.deployContract("AttestationExporter", [f.verifierAddress, EAS_PREDEPLOYS.EAS]);
  const eas = new Contract(EAS_PREDEPLOYS.EAS, easArtifact("EAS").abi, ethers.provider);
  const schemaRegistry = new Contract(EAS_PREDEPLOYS.SchemaRegistry, easArtifact("SchemaRegistry").abi, ethers.provider);
  const holder = f.outsider.address;
  return { ...f, exporter, eas, schemaRegistry, holder };
}
type Fixture = Awaited<ReturnType<typeof fixture>>;

/** `f.holder`'s balance on Ethereum over `fields`, signed by the first two nodes (`signers` picks others). */
async function holding(f: Fixture, fields: Partial<BalanceAttestation> = {}, signers = f.nodes.slice(0, 2)) {
  const attestation = await attestationOf(ethers, { owner: ethers.zeroPadValue(f.holder, 32), ...fields });
  return { attestation, signatures: await signAll(f.domain, attestation, signers) };
}

async function verdict(f: Fixture, fields: Partial<ConditionAttestation> = {}, signers = f.nodes.slice(0, 2)) {
  const attestation: ConditionAttestation = {
    conditionHash: ethers.keccak256("0x01"),
    ownersHash: ownersHash({ ethereum: f.holder, solana: SOLANA_OWNER }),
    verdict: true,
    ethereumBlock: 1_000n,
    solanaSlot: 2_000n,
    issuedAt: BigInt(await time.latest()),
    ...fields,
  };
  return { attestation, signatures: await signConditionAll(f.domain, attestation, signers) };
}

/** The UID a transaction's `AttestationExported` event names, and how many logs it wrote. */
async function exported(f: Fixture, tx: Promise<{ wait(): Promise<unknown> }>) {
  const receipt = (await (await tx).wait()) as { logs: Array<{ topics: readonly string[]; data: string }> };
  const event = receipt.logs.map((log) => f.exporter.interface.parseLog(log)).find((parsed) => parsed?.name === "AttestationExported");
  return {
    uid: event?.args.uid as string | undefined,
    answerHash: event?.args.answerHash as string | undefined,
    logs: receipt.logs.length,
  };
}

describe("AttestationExporter", function () {
  describe("deployment", function () {
    it("registers both schemas with itself as resolver, not revocable, under their documented UIDs", async function () {
      const f = await loadFixture(fixture);
      const exporter = await f.exporter.getAddress();
      for (const [schema, uid] of [
        [await f.exporter.BALANCE_SCHEMA(), await f.exporter.BALANCE_SCHEMA_UID()],
        [await f.exporter.CONDITION_SCHEMA(), await f.exporter.CONDITION_SCHEMA_UID()],
      ]) {
        expect(uid).to.equal(solidityPackedKeccak256(["string", "address", "bool"], [schema, exporter, false]));
        const record = await f.schemaRegistry.getFunction("getSchema")(uid);
        expect([record.uid, record.resolver, record.revocable, record.schema]).to.deep.equal([uid, exporter, false, schema]);
      }
      // The protocol package's copies (what the API's data.eas and the SDK use) are the contract's.
      expect([await f.exporter.BALANCE_SCHEMA(), await f.exporter.CONDITION_SCHEMA()]).to.deep.equal([
        BALANCE_EAS_SCHEMA,
        CONDITION_EAS_SCHEMA,
      ]);
      // The schemas name the signed structs' fields, in their order.
      expect(await f.exporter.BALANCE_SCHEMA()).to.equal(balanceKind.structType.replace(/^BalanceAttestation\((.*)\)$/, "$1"));
      expect(await f.exporter.CONDITION_SCHEMA()).to.equal(conditionKind.structType.replace(/^ConditionAttestation\((.*)\)$/, "$1"));
      expect(await f.exporter.VERIFIER()).to.equal(f.verifierAddress);
      expect(await f.exporter.MAX_EXPORT_AGE()).to.equal(await f.attestationVerifier.MAX_RECORD_AGE());
    });

    it("deploys where someone registered its schemas under its address beforehand, keeping their UIDs", async function () {
      const f = await loadFixture(fixture);
      // The next deployment's address follows from the deployer's nonce: anyone can register first.
      const [deployer] = await ethers.getSigners();
      const next = ethers.getCreateAddress({ from: deployer.address, nonce: await deployer.getNonce() });
      const registry = f.schemaRegistry.connect(f.outsider) as Contract;
      for (const schema of [BALANCE_EAS_SCHEMA, CONDITION_EAS_SCHEMA])
        await (await registry.getFunction("register")(schema, next, false)).wait();
      const exporter = await ethers.deployContract("AttestationExporter", [f.verifierAddress, EAS_PREDEPLOYS.EAS]);
      expect(await exporter.getAddress()).to.equal(next);
      expect(await exporter.BALANCE_SCHEMA_UID()).to.equal(
        solidityPackedKeccak256(["string", "address", "bool"], [BALANCE_EAS_SCHEMA, next, false]),
      );
      expect(await exporter.EAS()).to.equal(EAS_PREDEPLOYS.EAS);
      // And it exports under them.
      const { attestation, signatures } = await holding(f);
      await expect(exporter.exportAttestation(attestation, signatures)).to.emit(exporter, "AttestationExported");
    });

    it("refuses a zero verifier by name, and a zero EAS with EAS's own error", async function () {
      const f = await loadFixture(fixture);
      const factory = await ethers.getContractFactory("AttestationExporter");
      await expect(factory.deploy(ethers.ZeroAddress, EAS_PREDEPLOYS.EAS)).to.be.revertedWithCustomError(
        factory,
        "AttestationExporter_ZeroAddress",
      );
      await expect(factory.deploy(f.verifierAddress, ethers.ZeroAddress)).to.be.revertedWithCustomError(factory, "InvalidEAS");
    });
  });

  describe("exportAttestation", function () {
    it("attests a quorum-signed balance on EAS, as the exporter, to the Ethereum owner, with the struct as data", async function () {
      const f = await loadFixture(fixture);
      const { attestation, signatures } = await holding(f);
      const { uid, answerHash } = await exported(f, f.exporter.exportAttestation(attestation, signatures));
      expect(answerHash).to.equal(attestationStructHash(balanceKind, attestation));
      expect(await f.exporter.uidOf(answerHash!)).to.equal(uid);
      const stored = await f.eas.getFunction("getAttestation")(uid);
      expect(stored.uid).to.equal(uid);
      expect(stored.schema).to.equal(await f.exporter.BALANCE_SCHEMA_UID());
      expect(stored.attester).to.equal(await f.exporter.getAddress());
      expect(stored.recipient).to.equal(f.holder);
      expect([stored.expirationTime, stored.revocationTime, stored.revocable, stored.refUID]).to.deep.equal([
        0n,
        0n,
        false,
        ethers.ZeroHash,
      ]);
      const { chain, owner, asset, balance, queryResultHash, sourceBlock, issuedAt } = attestation;
      expect(coder.decode([BALANCE_TUPLE], stored.data)[0].toArray()).to.deep.equal([
        BigInt(chain),
        owner,
        asset,
        balance,
        queryResultHash,
        sourceBlock,
        issuedAt,
      ]);
      expect(await f.eas.getFunction("isAttestationValid")(uid)).to.equal(true);
    });

    it("returns the first UID for the same answer signed again by other nodes, and writes nothing", async function () {
      const f = await loadFixture(fixture);
      const first = await holding(f);
      const { uid } = await exported(f, f.exporter.exportAttestation(first.attestation, first.signatures));
      const again = await signAll(f.domain, first.attestation, f.nodes.slice(1, 3));
      expect(await f.exporter.exportAttestation.staticCall(first.attestation, again)).to.equal(uid);
      const second = await exported(f, f.exporter.exportAttestation(first.attestation, again));
      expect(second.logs).to.equal(0);
      // Another answer (a later issue time) is another attestation.
      const later = await holding(f, { issuedAt: first.attestation.issuedAt + 1n });
      await time.increase(1);
      const third = await exported(f, f.exporter.exportAttestation(later.attestation, later.signatures));
      expect(third.uid).to.not.equal(uid);
    });

    it("attests a Solana balance to no recipient", async function () {
      const f = await loadFixture(fixture);
      const { attestation, signatures } = await holding(f, { chain: 1, owner: ethers.hexlify(ethers.randomBytes(32)) });
      const { uid } = await exported(f, f.exporter.exportAttestation(attestation, signatures));
      expect((await f.eas.getFunction("getAttestation")(uid)).recipient).to.equal(ethers.ZeroAddress);
    });

    it("refuses what the verifier refuses, with the verifier's error, and records nothing", async function () {
      const f = await loadFixture(fixture);
      const { attestation, signatures } = await holding(f);
      await expect(f.exporter.exportAttestation(attestation, signatures.slice(0, 1)))
        .to.be.revertedWithCustomError(f.attestationVerifier, "AttestationVerifier_QuorumNotReached")
        .withArgs(1n, 2n);
      const tampered = { ...attestation, balance: attestation.balance + 1n };
      await expect(f.exporter.exportAttestation(tampered, signatures)).to.be.revertedWithCustomError(
        f.attestationVerifier,
        "AttestationVerifier_WrongSigner",
      );
      const maxAge = await f.exporter.MAX_EXPORT_AGE();
      const old = await holding(f, { issuedAt: BigInt(await time.latest()) - maxAge - 1n });
      await expect(f.exporter.exportAttestation(old.attestation, old.signatures))
        .to.be.revertedWithCustomError(f.attestationVerifier, "AttestationVerifier_StaleAttestation")
        .withArgs(old.attestation.issuedAt, maxAge);
      expect(await f.exporter.uidOf(attestationStructHash(balanceKind, attestation))).to.equal(ethers.ZeroHash);
    });
  });

  describe("exportConditionAttestation", function () {
    it("attests a signed verdict under the verdict schema, to no recipient, once", async function () {
      const f = await loadFixture(fixture);
      const { attestation, signatures } = await verdict(f);
      const { uid, answerHash } = await exported(f, f.exporter.exportConditionAttestation(attestation, signatures));
      expect(answerHash).to.equal(attestationStructHash(conditionKind, attestation));
      const stored = await f.eas.getFunction("getAttestation")(uid);
      expect([stored.schema, stored.attester, stored.recipient]).to.deep.equal([
        await f.exporter.CONDITION_SCHEMA_UID(),
        await f.exporter.getAddress(),
        ethers.ZeroAddress,
      ]);
      const { conditionHash, ownersHash: owners, verdict: said, ethereumBlock, solanaSlot, issuedAt } = attestation;
      expect(coder.decode([CONDITION_TUPLE], stored.data)[0].toArray()).to.deep.equal([
        conditionHash,
        owners,
        said,
        ethereumBlock,
        solanaSlot,
        issuedAt,
      ]);
      const again = await signConditionAll(f.domain, attestation, f.nodes.slice(1, 3));
      expect((await exported(f, f.exporter.exportConditionAttestation(attestation, again))).logs).to.equal(0);
      expect(await f.exporter.exportConditionAttestation.staticCall(attestation, again)).to.equal(uid);
    });

    it("refuses a verdict short of quorum with the verifier's error", async function () {
      const f = await loadFixture(fixture);
      const { attestation, signatures } = await verdict(f);
      await expect(f.exporter.exportConditionAttestation(attestation, signatures.slice(1)))
        .to.be.revertedWithCustomError(f.attestationVerifier, "AttestationVerifier_QuorumNotReached")
        .withArgs(1n, 2n);
    });
  });

  describe("the resolver", function () {
    it("refuses an attestation of either schema by any other attester (EAS reverts InvalidAttestation)", async function () {
      const f = await loadFixture(fixture);
      const { attestation } = await holding(f);
      const eas = f.eas.connect(f.outsider) as Contract;
      for (const schema of [await f.exporter.BALANCE_SCHEMA_UID(), await f.exporter.CONDITION_SCHEMA_UID()]) {
        const request = {
          schema,
          data: {
            recipient: f.holder,
            expirationTime: 0n,
            revocable: false,
            refUID: ethers.ZeroHash,
            data: coder.encode([BALANCE_TUPLE], [Object.values(attestation)]),
            value: 0n,
          },
        };
        await expect(eas.getFunction("attest")(request)).to.be.revertedWithCustomError(eas, "InvalidAttestation");
      }
    });

    it("answers only EAS, and no exported attestation can be revoked", async function () {
      const f = await loadFixture(fixture);
      const { attestation, signatures } = await holding(f);
      const { uid } = await exported(f, f.exporter.exportAttestation(attestation, signatures));
      const stored = (await f.eas.getFunction("getAttestation")(uid)).toObject();
      await expect(f.exporter.connect(f.outsider).getFunction("attest")(stored)).to.be.revertedWithCustomError(f.exporter, "AccessDenied");
      // Another account is not the attester; the attester itself (impersonated: the contract has no way to ask)
      // is refused because the schema is not revocable.
      const byOutsider = f.eas.connect(f.outsider) as Contract;
      const revocation = { schema: stored.schema, data: { uid, value: 0n } };
      await expect(byOutsider.getFunction("revoke")(revocation)).to.be.revertedWithCustomError(byOutsider, "AccessDenied");
      const exporterAddress = await f.exporter.getAddress();
      await networkHelpers.impersonateAccount(exporterAddress);
      await networkHelpers.setBalance(exporterAddress, 10n ** 18n);
      const byExporter = f.eas.connect(await ethers.getSigner(exporterAddress)) as Contract;
      await expect(byExporter.getFunction("revoke")(revocation)).to.be.revertedWithCustomError(byExporter, "Irrevocable");
    });
  });
});

import { expect } from "chai";
import { network } from "hardhat";
import { BaseError, ContractFunctionRevertedError, createWalletClient, custom, getAddress, type EIP1193Provider, type Hex } from "viem";
import { mnemonicToAccount } from "viem/accounts";
import { getTransactionCount } from "viem/actions";
import { Contract } from "ethers";

import { attestationDomain, attestationToJson } from "../../../src/common/attestation.ts";
import { balanceKind, conditionKind } from "@avn/protocol/attestation-kinds";
import type { AttestationDomain, BalanceAttestation } from "@avn/protocol/attestation";
import type { ConditionAttestation } from "@avn/protocol/conditions";
import { EAS_PREDEPLOYS } from "@avn/protocol/op-predeploys";
import {
  exportToEAS,
  InvalidArgumentError,
  UnexpectedVerifierError,
  type AttestationJson,
  type ConditionAttestationJson,
} from "../../../packages/sdk/src/index.ts";
import { easArtifact } from "../../../src/op/eas-artifacts.ts";
import { installEasPredeploys } from "../../../src/op/eas-predeploys.ts";
import { attestationOf, deployAttestationFixture, signAll, signConditionAll } from "../../helpers/attestations.ts";

const { ethers, networkHelpers, provider } = await network.create();
const { loadFixture, setCode, time } = networkHelpers;

/** Runtime code that answers every call with the word 1: a "verifier" of an attacker's own. */
const ANSWERS_TRUE = "0x600160005260206000f3";
const OTHER_VERIFIER = "0x00000000000000000000000000000000a77ac4e5";
const MNEMONIC = "test test test test test test test test test test test junk";

/** A default viem wallet client: a local account, no chain, gas, fee or nonce given (Hardhat's account 12). */
const account = mnemonicToAccount(MNEMONIC, { addressIndex: 12 });
const wallet = createWalletClient({ account, transport: custom(provider as EIP1193Provider, { retryCount: 0 }), pollingInterval: 50 });

async function fixture() {
  const f = await deployAttestationFixture(ethers);
  await installEasPredeploys(ethers.provider, "hardhat");
  const exporter = await ethers.deployContract("AttestationExporter", [f.verifierAddress, EAS_PREDEPLOYS.EAS]);
  const eas = new Contract(EAS_PREDEPLOYS.EAS, easArtifact("EAS").abi, ethers.provider);
  const options = { walletClient: wallet, verifier: f.verifierAddress as Hex, exporter: (await exporter.getAddress()) as Hex };
  return { ...f, exporter, eas, options };
}
type Fixture = Awaited<ReturnType<typeof fixture>>;

/** The API's JSON of a balance over `fields`, signed by two nodes under `domain`. */
async function balanceJson(f: Fixture, fields: Partial<BalanceAttestation> = {}, domain: AttestationDomain = f.domain) {
  const attestation = await attestationOf(ethers, fields);
  const signatures = await signAll(domain, attestation, f.nodes.slice(0, 2));
  return JSON.parse(JSON.stringify(attestationToJson(balanceKind, domain, attestation, signatures))) as AttestationJson;
}

async function verdictJson(f: Fixture) {
  const attestation: ConditionAttestation = {
    conditionHash: ethers.keccak256("0x02"),
    ownersHash: ethers.keccak256("0x03"),
    verdict: false,
    ethereumBlock: 7n,
    solanaSlot: 0n,
    issuedAt: BigInt(await time.latest()),
  };
  const signatures = await signConditionAll(f.domain, attestation, f.nodes.slice(1, 3));
  return JSON.parse(JSON.stringify(attestationToJson(conditionKind, f.domain, attestation, signatures))) as ConditionAttestationJson;
}

const nonce = () => getTransactionCount(wallet, { address: account.address });

function revertName(error: unknown): string | undefined {
  if (!(error instanceof BaseError)) return undefined;
  const reverted = error.walk((cause) => cause instanceof ContractFunctionRevertedError);
  return reverted instanceof ContractFunctionRevertedError ? reverted.data?.errorName : undefined;
}

describe("@avn/sdk exportToEAS", function () {
  it("exports a balance and a verdict from a default viem wallet client, and each once", async function () {
    const f = await loadFixture(fixture);
    const json = await balanceJson(f);
    const first = await exportToEAS(json, f.options);
    expect(first.exported).to.equal(true);
    expect(first.receipt?.status).to.equal("success");
    const stored = await f.eas.getFunction("getAttestation")(first.uid);
    expect([stored.attester, stored.schema]).to.deep.equal([await f.exporter.getAddress(), await f.exporter.BALANCE_SCHEMA_UID()]);

    const sent = await nonce();
    const again = await exportToEAS(json, f.options);
    expect(again).to.deep.equal({ uid: first.uid, exported: false });
    expect(await nonce()).to.equal(sent);

    const verdict = await exportToEAS(await verdictJson(f), f.options);
    expect(verdict.exported).to.equal(true);
    expect((await f.eas.getFunction("getAttestation")(verdict.uid)).schema).to.equal(await f.exporter.CONDITION_SCHEMA_UID());
  });

  it("refuses a stale answer with the verifier's named error, and sends nothing", async function () {
    const f = await loadFixture(fixture);
    const maxAge = await f.exporter.MAX_EXPORT_AGE();
    const stale = await balanceJson(f, { issuedAt: BigInt(await time.latest()) - maxAge - 1n });
    const sent = await nonce();
    const refused = await exportToEAS(stale, f.options).catch((caught: unknown) => caught);
    expect(revertName(refused)).to.equal("AttestationVerifier_StaleAttestation");
    expect(await nonce()).to.equal(sent);
  });

  it("refuses another verifier's answer, an exporter of another verifier and a bad address before sending", async function () {
    const f = await loadFixture(fixture);
    await setCode(OTHER_VERIFIER, ANSWERS_TRUE);
    const elsewhere = await balanceJson(f, {}, attestationDomain(f.domain.chainId, OTHER_VERIFIER));
    const sent = await nonce();
    const wrongVerifier = await exportToEAS(elsewhere, f.options).catch((caught: unknown) => caught);
    expect(wrongVerifier).to.be.instanceOf(UnexpectedVerifierError);
    expect(wrongVerifier).to.include({ verifier: getAddress(OTHER_VERIFIER), trusted: f.options.verifier });

    // An exporter built over the attacker's "verifier", which passes anything.
    const rogue = await ethers.deployContract("AttestationExporter", [OTHER_VERIFIER, EAS_PREDEPLOYS.EAS]);
    const json = await balanceJson(f);
    const wrongExporter = await exportToEAS(json, { ...f.options, exporter: (await rogue.getAddress()) as Hex }).catch(
      (caught: unknown) => caught,
    );
    expect(wrongExporter).to.be.instanceOf(UnexpectedVerifierError);
    expect(wrongExporter).to.include({ verifier: getAddress(OTHER_VERIFIER) });

    const invalid = await exportToEAS(json, { ...f.options, exporter: "0xnope" }).catch((caught: unknown) => caught);
    expect(invalid).to.be.instanceOf(InvalidArgumentError);
    expect(invalid).to.include({ argument: "options.exporter" });
    expect(await nonce()).to.equal(sent);
  });
});

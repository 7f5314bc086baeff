import { expect } from "chai";
import { network } from "hardhat";
import { BaseError, ContractFunctionRevertedError, createWalletClient, custom, type EIP1193Provider } from "viem";
import { mnemonicToAccount } from "viem/accounts";
import { getTransactionCount } from "viem/actions";

import { attestationDomain, attestationToJson, signAttestation } from "../../../src/common/attestation.ts";
import { balanceKind, conditionKind } from "@avn/protocol/attestation-kinds";
import type { AttestationDomain, BalanceAttestation } from "@avn/protocol/attestation";
import {
  InvalidArgumentError,
  MalformedAttestationError,
  NotRecordableError,
  ownersHash,
  recordAttestation,
  StaleAttestationError,
  UnexpectedVerifierError,
  WrongChainError,
  type AttestationJson,
  type ConditionAttestationJson,
} from "../../../packages/sdk/src/index.ts";
import { attestationOf, domainOf, signAll } from "../../helpers/attestations.ts";
import { deployProtocol, REQUEST_FEE } from "../../helpers/protocol.ts";

const { ethers, networkHelpers, provider } = await network.create();
const { loadFixture, setCode, time } = networkHelpers;

/** Runtime code that answers every call with the word 1, and so accepts any call: a "verifier" of the attacker's own. */
const ANSWERS_TRUE = "0x600160005260206000f3";
const ATTACKER_VERIFIER = "0x00000000000000000000000000000000a77ac4e5";

/** Hardhat's development accounts; account 9 is deployProtocol's consumer, with collateral for the request fee. */
const MNEMONIC = "test test test test test test test test test test test junk";

/** Derived once each: a mnemonic's key derivation takes about a second in JavaScript. */
const accounts = new Map<number, ReturnType<typeof mnemonicToAccount>>();

/**
 * A default viem wallet client: a local account that signs itself, no chain configured, no gas, fee or
 * nonce given anywhere. `recordAttestation` must make it work as it is. (No transport retries: viem would
 * retry Hardhat's in-process revert errors with backoff, which only slows the refusals down.)
 */
function walletOf(addressIndex: number) {
  let account = accounts.get(addressIndex);
  if (account === undefined) {
    account = mnemonicToAccount(MNEMONIC, { addressIndex });
    accounts.set(addressIndex, account);
  }
  return createWalletClient({ account, transport: custom(provider as EIP1193Provider, { retryCount: 0 }), pollingInterval: 50 });
}

async function fixture() {
  const protocol = await deployProtocol(ethers);
  const domain = await domainOf(ethers, await protocol.attestationVerifier.getAddress());
  const nodes = protocol.nodes.map(({ burner, licenseId }) => ({ burner, licenseIds: [licenseId] }));
  return { ...protocol, domain, nodes };
}

type Fixture = Awaited<ReturnType<typeof fixture>>;

async function signedJson(
  f: Fixture,
  fields: Partial<BalanceAttestation> = {},
  domain: AttestationDomain = f.domain,
): Promise<AttestationJson> {
  const attestation = await attestationOf(ethers, fields);
  const signatures = await signAll(domain, attestation, f.nodes.slice(0, 2));
  return JSON.parse(JSON.stringify(attestationToJson(balanceKind, domain, attestation, signatures))) as AttestationJson;
}

/** The call's error: it must fail. */
async function refusalOf(call: Promise<unknown>): Promise<Error> {
  const outcome = await call.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(outcome, "the call should have failed").to.be.instanceOf(Error);
  return outcome as Error;
}

/** The custom error's name a rejected call carries (viem decodes it with the SDK's ABI). */
function revertName(error: unknown): string | undefined {
  if (!(error instanceof BaseError)) return undefined;
  const reverted = error.walk((cause) => cause instanceof ContractFunctionRevertedError);
  return reverted instanceof ContractFunctionRevertedError ? reverted.data?.errorName : undefined;
}

describe("@avn/sdk recordAttestation", function () {
  it("records an attested balance from a default viem wallet client, with a margin over the estimate", async function () {
    const f = await loadFixture(fixture);
    const wallet = walletOf(9);
    expect(wallet.account.address).to.equal(f.consumer.address);
    const json = await signedJson(f, { balance: 9007199254753337n });
    const { collateral: before } = await collateralOf(f);

    const recorded = await recordAttestation(wallet, json);
    expect(recorded.receipt.status).to.equal("success");
    expect(recorded.receipt.transactionHash).to.equal(recorded.hash);
    // The limit sent is the estimate plus 30%, and the recording used about the estimate.
    expect(recorded.receipt.gasUsed).to.be.below(recorded.gas);
    expect(Number(recorded.gas) / Number(recorded.receipt.gasUsed)).to.be.within(1.2, 1.4);

    const [owner, asset] = [json.message.owner, json.message.asset];
    const latest = await f.registry.latestBalance(0, owner, asset);
    expect(latest.balance).to.equal(9007199254753337n);
    expect(latest.jobId).to.equal(0n);
    // The consumer paid the request fee from its collateral.
    expect((await collateralOf(f)).collateral).to.equal(before - REQUEST_FEE);
  });

  it("rejects a bad attestation with the contract's named error before sending anything", async function () {
    const f = await loadFixture(fixture);
    const wallet = walletOf(9);
    const json = await signedJson(f);
    await recordAttestation(wallet, json);
    const nonce = await getTransactionCount(wallet, { address: wallet.account.address });

    // The same attestation again: the registry keeps only newer ones.
    const again = await recordAttestation(wallet, json).catch((caught: unknown) => caught);
    expect(revertName(again)).to.equal("VerificationRegistry_AttestationNotNewer");
    // One field changed after signing.
    const tampered = { ...json, message: { ...json.message, balance: "1" } };
    expect(revertName(await recordAttestation(wallet, tampered).catch((caught: unknown) => caught))).to.equal(
      "AttestationVerifier_WrongSigner",
    );
    // A sender without collateral for the fee (account 12 deposited none).
    const fresh = await signedJson(f, { owner: ethers.zeroPadValue(f.outsider.address, 32) });
    const poorWallet = walletOf(12);
    const poor = await recordAttestation(poorWallet, fresh).catch((caught: unknown) => caught);
    expect(revertName(poor)).to.equal("VerificationRegistry_InsufficientCollateral");

    // Nothing was sent: the simulations refused them.
    expect(await getTransactionCount(wallet, { address: wallet.account.address })).to.equal(nonce);
    expect(await getTransactionCount(poorWallet, { address: poorWallet.account.address })).to.equal(0);
  });

  it("sends only to the trusted verifier when `verifier` is set, and refuses another before asking anything", async function () {
    const f = await loadFixture(fixture);
    const wallet = walletOf(9);
    const verifierAddress = await f.attestationVerifier.getAddress();
    await setCode(ATTACKER_VERIFIER, ANSWERS_TRUE);
    const elsewhere = await signedJson(f, {}, attestationDomain(f.domain.chainId, ATTACKER_VERIFIER));
    const nonce = await getTransactionCount(wallet, { address: wallet.account.address });

    const refused = await refusalOf(recordAttestation(wallet, elsewhere, { verifier: verifierAddress as `0x${string}` }));
    expect(refused).to.be.instanceOf(UnexpectedVerifierError);
    expect(refused).to.include({ code: "UNEXPECTED_VERIFIER", verifier: ethers.getAddress(ATTACKER_VERIFIER), trusted: verifierAddress });
    expect(refused.message).to.include(ethers.getAddress(ATTACKER_VERIFIER)).and.include(verifierAddress);
    expect(await getTransactionCount(wallet, { address: wallet.account.address })).to.equal(nonce);

    // The network's own attestation, its verifier named in any case: recorded.
    const json = await signedJson(f);
    const recorded = await recordAttestation(wallet, json, { verifier: verifierAddress.toLowerCase() as `0x${string}` });
    expect(recorded.receipt.status).to.equal("success");
    expect(recorded.receipt.to?.toLowerCase()).to.equal(verifierAddress.toLowerCase());
    const invalid = await refusalOf(recordAttestation(wallet, json, { verifier: "0xnot-an-address" }));
    expect(invalid).to.be.instanceOf(InvalidArgumentError);
    expect(invalid).to.include({ code: "INVALID_ARGUMENT", argument: "options.verifier" });
    expect(invalid.message).to.match(/options\.verifier must be an address/);
  });

  it("refuses, before sending, a wallet on another chain, a wallet without an account, and malformed JSON", async function () {
    const f = await loadFixture(fixture);
    const wallet = walletOf(9);
    const nonce = await getTransactionCount(wallet, { address: wallet.account.address });
    const chainId = BigInt(f.domain.chainId);
    const otherChain = await signedJson(f, {}, attestationDomain(999n, await f.attestationVerifier.getAddress()));
    const wrongChain = await refusalOf(recordAttestation(wallet, otherChain));
    expect(wrongChain).to.be.instanceOf(WrongChainError);
    expect(wrongChain).to.include({ code: "WRONG_CHAIN", walletChainId: chainId, attestationChainId: 999n });

    const json = await signedJson(f);
    const accountless = createWalletClient({ transport: custom(provider as EIP1193Provider, { retryCount: 0 }) });
    const noAccount = await refusalOf(recordAttestation(accountless, json));
    expect(noAccount).to.be.instanceOf(InvalidArgumentError);
    expect(noAccount).to.include({ code: "INVALID_ARGUMENT", argument: "options.account" });

    const malformed = await refusalOf(recordAttestation(wallet, { ...json, message: { ...json.message, issuedAt: "soon" } }));
    expect(malformed).to.be.instanceOf(MalformedAttestationError);
    expect(malformed).to.include({ code: "MALFORMED_ATTESTATION", path: "message.issuedAt" });
    expect(await getTransactionCount(wallet, { address: wallet.account.address })).to.equal(nonce);
  });

  it("refuses, before sending, an attestation that would be past MAX_RECORD_AGE once mined", async function () {
    const f = await loadFixture(fixture);
    const wallet = walletOf(9);
    const maxRecordAge = await f.attestationVerifier.MAX_RECORD_AGE();
    const now = BigInt(await time.latest());
    // Ten seconds short of the limit at the latest block: the simulation there passes, a block mined
    // half a minute later would revert.
    const old = await signedJson(f, { issuedAt: now - maxRecordAge + 10n });
    const nonce = await getTransactionCount(wallet, { address: wallet.account.address });
    const refused = await refusalOf(recordAttestation(wallet, old));
    expect(refused).to.be.instanceOf(StaleAttestationError);
    const stale = refused as StaleAttestationError;
    expect(stale.code).to.equal("STALE_ATTESTATION");
    expect([stale.issuedAt, stale.maxRecordAge, stale.marginSeconds]).to.deep.equal([now - maxRecordAge + 10n, maxRecordAge, 30]);
    expect(stale.latestBlockTime >= now).to.equal(true);
    // The message still names the contract's error as it would have reverted.
    expect(refused.message).to.match(new RegExp(`^AttestationVerifier_StaleAttestation\\(${now - maxRecordAge + 10n}, ${maxRecordAge}\\)`));
    expect(refused.message).to.include("nothing was sent");
    expect(await getTransactionCount(wallet, { address: wallet.account.address })).to.equal(nonce);
    // A smaller margin takes the chance, and here (automine, the next block a second later) wins it.
    expect((await recordAttestation(wallet, old, { staleMarginSeconds: 5 })).receipt.status).to.equal("success");
  });

  it("refuses a gas margin, a staleness margin or a wait that is not an integer of 0 or more", async function () {
    const f = await loadFixture(fixture);
    const wallet = walletOf(9);
    const json = await signedJson(f);
    const nonce = await getTransactionCount(wallet, { address: wallet.account.address });
    for (const gasMarginPercent of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])
      await expectInvalidArgument(
        recordAttestation(wallet, json, { gasMarginPercent }),
        "options.gasMarginPercent",
        /gasMarginPercent must be an integer, 0 or more/,
      );
    await expectInvalidArgument(
      recordAttestation(wallet, json, { staleMarginSeconds: -30 }),
      "options.staleMarginSeconds",
      /staleMarginSeconds/,
    );
    // A NaN would never end the wait for the chain to reach issuedAt.
    await expectInvalidArgument(
      recordAttestation(wallet, json, { waitForIssuedAtMs: Number.NaN }),
      "options.waitForIssuedAtMs",
      /waitForIssuedAtMs/,
    );
    expect(await getTransactionCount(wallet, { address: wallet.account.address })).to.equal(nonce);
  });

  it("refuses to record a signed verdict: verdicts are checked in views only", async function () {
    const f = await loadFixture(fixture);
    const attestation = {
      conditionHash: ethers.id("a condition"),
      ownersHash: ownersHash({ ethereum: f.consumer.address }),
      verdict: true,
      ethereumBlock: 1n,
      solanaSlot: 0n,
      issuedAt: BigInt((await ethers.provider.getBlock("latest"))!.timestamp),
    };
    const signatures = await Promise.all(
      f.nodes.slice(0, 2).map(async ({ burner, licenseIds }) => ({
        signer: burner.address,
        licenseIds,
        signature: await signAttestation(conditionKind, burner, f.domain, attestation, licenseIds),
      })),
    );
    const json = JSON.parse(
      JSON.stringify(attestationToJson(conditionKind, f.domain, attestation, signatures)),
    ) as ConditionAttestationJson;
    const refused = await recordAttestation(walletOf(9), json as unknown as AttestationJson).catch((caught: unknown) => caught);
    expect(refused).to.be.instanceOf(NotRecordableError);
    expect((refused as NotRecordableError).code).to.equal("NOT_RECORDABLE");
    expect((refused as Error).message).to.match(/cannot be recorded/);
  });
});

async function expectInvalidArgument(call: Promise<unknown>, argument: string, message: RegExp): Promise<void> {
  const refused = await refusalOf(call);
  expect(refused).to.be.instanceOf(InvalidArgumentError);
  expect(refused).to.include({ code: "INVALID_ARGUMENT", argument });
  expect(refused.message).to.match(message);
}

async function collateralOf(f: Fixture): Promise<{ collateral: bigint }> {
  return { collateral: (await f.registry.collateralOf(f.consumer.address)).available };
}

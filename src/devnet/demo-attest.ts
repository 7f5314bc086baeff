import type { AttestationJson } from "@avn/protocol/attestation-kinds";
import { NonceManager, Wallet, type Provider } from "ethers";

import { AttestationVerifier__factory, VerificationRegistry__factory } from "../../typechain-types/index.ts";

import { attestationFromJson } from "../common/attestation.ts";

import { balanceKind } from "@avn/protocol/attestation-kinds";

import { type BalanceAttestation } from "@avn/protocol/attestation";
import { postToApi, type DemoQuery } from "./demo-verify.ts";

import type { StackFile } from "../common/stack-file.ts";

/** The age an attestation may have for the demo's checks, in seconds. */
const MAX_AGE = 3_600n;

export interface AttestedVerification {
  attestation: BalanceAttestation;
  /** The licenses whose signatures came with it. */
  licenseIds: bigint[];
  /** From sending the API request to reading its attested answer. */
  apiMs: number;
  /** What the deployed verifier says of it (the view check, free). */
  valid: boolean;
  /** Gas used by the consumer's `recordAttestation` transaction. */
  recordGas: bigint;
  /** `latestBalance` of the holding once recorded. */
  latest: { balance: bigint; jobId: bigint };
}

/**
 * Asks the API for an attested answer (`?attest=true`), checks it with the deployed verifier, records it as
 * the stack's consumer and reads `latestBalance`: the attested path that `npm run demo:verify` shows beside
 * the job path, and that the end-to-end tests assert for every demo holding.
 */
export async function attestAndRecord(stack: StackFile, l2: Provider, query: DemoQuery): Promise<AttestedVerification> {
  const started = performance.now();
  const text = await postToApi(stack, query, "?attest=true");
  const apiMs = performance.now() - started;
  const json = (JSON.parse(text) as { data: { attestation?: AttestationJson } }).data.attestation;
  if (json === undefined) throw new Error("the API's answer carries no attestation");
  const { attestation, signatures } = attestationFromJson(balanceKind, json);

  const consumer = new NonceManager(new Wallet(stack.accounts!.consumer.privateKey, l2));
  const verifier = AttestationVerifier__factory.connect(stack.contracts!.l2!.AttestationVerifier, consumer);
  const valid = await verifier.isAttestationValid(attestation, signatures, MAX_AGE);
  // With a margin over the estimate, as a node sends: a recording calls into the registry, whose share of
  // the gas is capped at 63/64 of what is left (EIP-150), and anvil's estimate here has come out short of
  // that by a few hundred gas, ending in an out-of-gas revert.
  const estimate = await verifier.recordAttestation.estimateGas(attestation, signatures);
  const receipt = await (await verifier.recordAttestation(attestation, signatures, { gasLimit: (estimate * 13n) / 10n })).wait();
  const registry = VerificationRegistry__factory.connect(stack.contracts!.l2!.VerificationRegistry, l2);
  const latest = await registry.latestBalance(attestation.chain, attestation.owner, attestation.asset);
  return {
    attestation,
    licenseIds: signatures.flatMap(({ licenseIds }) => licenseIds),
    apiMs,
    valid,
    recordGas: receipt!.gasUsed,
    latest: { balance: latest.balance, jobId: latest.jobId },
  };
}

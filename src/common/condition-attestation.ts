import { TypedDataEncoder, type TypedDataDomain } from "ethers";

import type { AttestationDomain, NodeSignature } from "@avn/protocol/attestation";
import { domainFromJson, domainToJson, mutableTypesOf, recoverTypedSigner, signaturesFromJson, signaturesToJson } from "./attestation.ts";
import { LICENSED_CONDITION_ATTESTATION_TYPES, type ConditionAttestation, type ConditionAttestationJson } from "@avn/protocol/conditions";

// Signing, recovery and JSON of condition attestations (signed verdicts over holding conditions) with
// ethers, for the node and the API, as src/common/attestation.ts does for balances. The definitions (type
// strings, fields) are the protocol package's; the domain is the balance attestations' (`attestationDomain`).

/** The EIP-712 digest a node signs for `attestation` and its `licenseIds` (order kept), and the contract recovers signers from. */
export function conditionAttestationDigest(
  domain: AttestationDomain,
  attestation: ConditionAttestation,
  licenseIds: readonly bigint[],
): string {
  return TypedDataEncoder.hash(domain, mutableTypes(), licensedMessage(attestation, licenseIds));
}

/** The EIP-712 hashStruct of the attestation alone: one key for the struct whatever licenses signed it. */
export function conditionStructHash(attestation: ConditionAttestation): string {
  return TypedDataEncoder.hashStruct("ConditionAttestation", mutableTypes(), attestation);
}

/** Signs `attestation` for `licenseIds` with an ethers signer (a node's burner wallet); returns the 65-byte signature. */
export async function signConditionAttestation(
  signer: {
    signTypedData: (
      domain: TypedDataDomain,
      types: Record<string, Array<{ name: string; type: string }>>,
      value: Record<string, unknown>,
    ) => Promise<string>;
  },
  domain: AttestationDomain,
  attestation: ConditionAttestation,
  licenseIds: readonly bigint[],
): Promise<string> {
  return signer.signTypedData(domain, mutableTypes(), licensedMessage(attestation, licenseIds));
}

/**
 * The address that signed `attestation` for `licenseIds` under `domain`, or undefined when the signature
 * is malformed or malleable (a high-s value, which the contract refuses too).
 */
export function recoverConditionSigner(
  domain: AttestationDomain,
  attestation: ConditionAttestation,
  licenseIds: readonly bigint[],
  signature: string,
): string | undefined {
  return recoverTypedSigner(domain, mutableTypes(), licensedMessage(attestation, licenseIds), signature);
}

/** The API's JSON form: `message.verdict` a JSON boolean, integers as decimal strings, the domain's chain id as a number. */
export function conditionAttestationToJson(
  domain: AttestationDomain,
  attestation: ConditionAttestation,
  signatures: readonly NodeSignature[],
): ConditionAttestationJson {
  return { domain: domainToJson(domain), message: conditionMessageToJson(attestation), signatures: signaturesToJson(signatures) };
}

/** Parses the API's JSON form back (for clients, tests and the contract call's arguments). */
export function conditionAttestationFromJson(json: ConditionAttestationJson): {
  domain: AttestationDomain;
  attestation: ConditionAttestation;
  signatures: NodeSignature[];
} {
  return {
    domain: domainFromJson(json.domain),
    attestation: conditionMessageFromJson(json.message),
    signatures: signaturesFromJson(json.signatures),
  };
}

/** The struct as JSON (the API's `message`, and what a node sends the hub). */
export function conditionMessageToJson(attestation: ConditionAttestation): ConditionAttestationJson["message"] {
  return {
    conditionHash: attestation.conditionHash.toLowerCase(),
    ownersHash: attestation.ownersHash.toLowerCase(),
    verdict: attestation.verdict,
    ethereumBlock: attestation.ethereumBlock.toString(),
    solanaSlot: attestation.solanaSlot.toString(),
    issuedAt: attestation.issuedAt.toString(),
  };
}

/**
 * Parses a struct's JSON; the bytes32 fields in lower-case hex, one spelling to compare (the digest ignores
 * case). A verdict that is not a JSON boolean is refused: `"false"` is a truthy string, and a struct that
 * reads as true by mistake would be signed or verified as such.
 */
export function conditionMessageFromJson(message: ConditionAttestationJson["message"]): ConditionAttestation {
  if (typeof message.verdict !== "boolean") throw new TypeError("the verdict must be a JSON boolean");
  return {
    conditionHash: message.conditionHash.toLowerCase(),
    ownersHash: message.ownersHash.toLowerCase(),
    verdict: message.verdict,
    ethereumBlock: BigInt(message.ethereumBlock),
    solanaSlot: BigInt(message.solanaSlot),
    issuedAt: BigInt(message.issuedAt),
  };
}

/** The typed-data message a node signs: `{attestation, licenseIds}`. */
function licensedMessage(attestation: ConditionAttestation, licenseIds: readonly bigint[]): Record<string, unknown> {
  return { attestation: { ...attestation }, licenseIds: [...licenseIds] };
}

/** The condition attestation's types as ethers takes them. */
function mutableTypes(): Record<string, Array<{ name: string; type: string }>> {
  return mutableTypesOf(LICENSED_CONDITION_ATTESTATION_TYPES);
}

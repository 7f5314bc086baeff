import type { AttestationJson } from "@avn/protocol/attestation-kinds";
import { getAddress, isHexString, Signature, TypedDataEncoder, verifyTypedData, type TypedDataDomain } from "ethers";

import { ATTESTATION_DOMAIN_NAME, ATTESTATION_DOMAIN_VERSION, type AttestationDomain, type NodeSignature } from "@avn/protocol/attestation";
import type { AttestationKind } from "@avn/protocol/attestation-kinds";

// Hashing, signing, recovery and JSON of signed answers with ethers (the node and the API), for every kind
// alike: each function takes the kind's descriptor (`@avn/protocol/attestation-kinds`), which holds what
// differs between a balance and a verdict (the struct's types and its JSON).

/** The API's JSON form of an attestation of any kind: its domain, its struct's message, the signatures. */
export interface AttestedJson<Message> {
  domain: AttestationJson["domain"];
  message: Message;
  signatures: AttestationJson["signatures"];
}

/** What signs typed data (a node's burner wallet, an ethers signer). */
export interface TypedDataSigner {
  signTypedData(
    domain: TypedDataDomain,
    types: Record<string, Array<{ name: string; type: string }>>,
    value: Record<string, unknown>,
  ): Promise<string>;
}

export function attestationDomain(chainId: bigint, verifyingContract: string): AttestationDomain {
  return { name: ATTESTATION_DOMAIN_NAME, version: ATTESTATION_DOMAIN_VERSION, chainId, verifyingContract: getAddress(verifyingContract) };
}

/** The EIP-712 digest a node signs for `struct` and its `licenseIds` (order kept), and the contract recovers signers from. */
export function attestationDigest<S>(
  kind: AttestationKind<S, unknown>,
  domain: AttestationDomain,
  struct: S,
  licenseIds: readonly bigint[],
): string {
  return TypedDataEncoder.hash(domain, typesOf(kind), licensedMessage(struct, licenseIds));
}

/** The EIP-712 hashStruct of the struct alone: one key for the struct whatever licenses signed it. */
export function attestationStructHash<S>(kind: AttestationKind<S, unknown>, struct: S): string {
  return TypedDataEncoder.hashStruct(kind.structName, typesOf(kind), struct as Record<string, unknown>);
}

/** Signs `struct` for `licenseIds` (a node's burner wallet); returns the 65-byte signature. */
export function signAttestation<S>(
  kind: AttestationKind<S, unknown>,
  signer: TypedDataSigner,
  domain: AttestationDomain,
  struct: S,
  licenseIds: readonly bigint[],
): Promise<string> {
  return signer.signTypedData(domain, typesOf(kind), licensedMessage(struct, licenseIds));
}

/**
 * The address that signed `struct` for `licenseIds` under `domain`, or undefined when the signature is
 * malformed or malleable (a high-s value, which the verifier contract refuses too).
 */
export function recoverAttestationSigner<S>(
  kind: AttestationKind<S, unknown>,
  domain: AttestationDomain,
  struct: S,
  licenseIds: readonly bigint[],
  signature: string,
): string | undefined {
  if (!isHexString(signature, 65)) return undefined;
  try {
    if (BigInt(Signature.from(signature).s) > SECP256K1_HALF_N) return undefined;
    return verifyTypedData(domain, typesOf(kind), licensedMessage(struct, licenseIds), signature);
  } catch {
    return undefined;
  }
}

/** The API's JSON form: the domain's chain id a number, the struct's message, license ids as decimal strings. */
export function attestationToJson<S, M>(
  kind: AttestationKind<S, M>,
  domain: AttestationDomain,
  struct: S,
  signatures: readonly NodeSignature[],
): AttestedJson<M> {
  return { domain: domainToJson(domain), message: kind.toMessage(struct), signatures: signaturesToJson(signatures) };
}

/** Parses the API's JSON form back (for clients, tests and the contract call's arguments). */
export function attestationFromJson<S, M>(
  kind: AttestationKind<S, M>,
  json: AttestedJson<M>,
): { domain: AttestationDomain; attestation: S; signatures: NodeSignature[] } {
  return {
    domain: domainFromJson(json.domain),
    attestation: kind.fromMessage(json.message),
    signatures: signaturesFromJson(json.signatures),
  };
}

/** The domain as the API's JSON writes it (the chain id a number). */
export function domainToJson(domain: AttestationDomain): AttestationJson["domain"] {
  return { name: domain.name, version: domain.version, chainId: Number(domain.chainId), verifyingContract: domain.verifyingContract };
}

/** The signatures as the API's JSON writes them (license ids as decimal strings). */
export function signaturesToJson(signatures: readonly NodeSignature[]): AttestationJson["signatures"] {
  return signatures.map(({ signer, licenseIds, signature }) => ({ signer, licenseIds: licenseIds.map(String), signature }));
}

/** `domainToJson` read back. */
export function domainFromJson(json: AttestationJson["domain"]): AttestationDomain {
  return { name: json.name, version: json.version, chainId: BigInt(json.chainId), verifyingContract: getAddress(json.verifyingContract) };
}

/** `signaturesToJson` read back (signers checksummed, license ids as bigints). */
export function signaturesFromJson(json: AttestationJson["signatures"]): NodeSignature[] {
  return json.map(({ signer, licenseIds, signature }) => ({ signer: getAddress(signer), licenseIds: licenseIds.map(BigInt), signature }));
}

const SECP256K1_HALF_N = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n;

/** The typed-data message a node signs: `{attestation, licenseIds}`. */
function licensedMessage(struct: unknown, licenseIds: readonly bigint[]): Record<string, unknown> {
  return { attestation: { ...(struct as Record<string, unknown>) }, licenseIds: [...licenseIds] };
}

/** The kind's types as ethers takes them (mutable arrays; the protocol's pinned definitions stay `as const`). */
function typesOf(kind: AttestationKind<unknown, unknown>): Record<string, Array<{ name: string; type: string }>> {
  return Object.fromEntries(Object.entries(kind.types).map(([name, fields]) => [name, fields.map((field) => ({ ...field }))]));
}

import { getAddress, isHexString, Signature, TypedDataEncoder, verifyTypedData, type TypedDataDomain } from "ethers";

import {
  ATTESTATION_DOMAIN_NAME,
  ATTESTATION_DOMAIN_VERSION,
  AttestedChain,
  LICENSED_BALANCE_ATTESTATION_TYPES,
  type AttestationDomain,
  type AttestationJson,
  type BalanceAttestation,
  type NodeSignature,
} from "@avn/protocol/attestation";

// Signing, recovery and JSON of balance attestations with ethers (the node and the API); the definitions
// (types, type strings, domain name) are the protocol package's.
export function attestationDomain(chainId: bigint, verifyingContract: string): AttestationDomain {
  return { name: ATTESTATION_DOMAIN_NAME, version: ATTESTATION_DOMAIN_VERSION, chainId, verifyingContract: getAddress(verifyingContract) };
}

/** The EIP-712 digest a node signs for `attestation` and its `licenseIds` (order kept), and the contract recovers signers from. */
export function attestationDigest(domain: AttestationDomain, attestation: BalanceAttestation, licenseIds: readonly bigint[]): string {
  return TypedDataEncoder.hash(domain, mutableTypes(), licensedMessage(attestation, licenseIds));
}

/** The EIP-712 hashStruct of the attestation alone: one key for the struct whatever licenses signed it. */
export function attestationStructHash(attestation: BalanceAttestation): string {
  return TypedDataEncoder.hashStruct("BalanceAttestation", mutableTypes(), attestation);
}

/** The typed-data message a node signs: `{attestation, licenseIds}`. */
export function licensedMessage(attestation: BalanceAttestation, licenseIds: readonly bigint[]): Record<string, unknown> {
  return { attestation: { ...attestation }, licenseIds: [...licenseIds] };
}

/** Signs `attestation` for `licenseIds` with an ethers signer (a node's burner wallet); returns the 65-byte signature. */
export async function signAttestation(
  signer: {
    signTypedData: (
      domain: TypedDataDomain,
      types: Record<string, Array<{ name: string; type: string }>>,
      value: Record<string, unknown>,
    ) => Promise<string>;
  },
  domain: AttestationDomain,
  attestation: BalanceAttestation,
  licenseIds: readonly bigint[],
): Promise<string> {
  return signer.signTypedData(domain, mutableTypes(), licensedMessage(attestation, licenseIds));
}

/**
 * The address that signed `attestation` for `licenseIds` under `domain`, or undefined when the signature
 * is malformed or malleable (a high-s value, which the contract refuses too).
 */
export function recoverAttestationSigner(
  domain: AttestationDomain,
  attestation: BalanceAttestation,
  licenseIds: readonly bigint[],
  signature: string,
): string | undefined {
  return recoverTypedSigner(domain, mutableTypes(), licensedMessage(attestation, licenseIds), signature);
}

/**
 * The address that signed the typed data `message` (of `types`) under `domain`, or undefined when the
 * signature is malformed or malleable (a high-s value, which the verifier contract refuses too). Shared by
 * the balance and the condition attestations.
 */
export function recoverTypedSigner(
  domain: AttestationDomain,
  types: Record<string, Array<{ name: string; type: string }>>,
  message: Record<string, unknown>,
  signature: string,
): string | undefined {
  if (!isHexString(signature, 65)) return undefined;
  try {
    if (BigInt(Signature.from(signature).s) > SECP256K1_HALF_N) return undefined;
    return verifyTypedData(domain, types, message, signature);
  } catch {
    return undefined;
  }
}

/** Whether two attestations are the same struct (same digest under any one domain). */
export function sameAttestation(a: BalanceAttestation, b: BalanceAttestation): boolean {
  return (
    a.chain === b.chain &&
    a.owner.toLowerCase() === b.owner.toLowerCase() &&
    a.asset.toLowerCase() === b.asset.toLowerCase() &&
    a.balance === b.balance &&
    a.queryResultHash.toLowerCase() === b.queryResultHash.toLowerCase() &&
    a.sourceBlock === b.sourceBlock &&
    a.issuedAt === b.issuedAt
  );
}

/** The API's JSON form: integers of the message as decimal strings, the domain's chain id as a number. */
export function attestationToJson(
  domain: AttestationDomain,
  attestation: BalanceAttestation,
  signatures: NodeSignature[],
): AttestationJson {
  return { domain: domainToJson(domain), message: attestationMessageToJson(attestation), signatures: signaturesToJson(signatures) };
}

/** The domain as the API's JSON writes it (the chain id a number), for both kinds of attestation. */
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

/** Parses the API's JSON form back (for clients, tests and the contract call's arguments). */
export function attestationFromJson(json: AttestationJson): {
  domain: AttestationDomain;
  attestation: BalanceAttestation;
  signatures: NodeSignature[];
} {
  return {
    domain: domainFromJson(json.domain),
    attestation: attestationMessageFromJson(json.message),
    signatures: signaturesFromJson(json.signatures),
  };
}

/** The struct as JSON (the API's `message`, and what a node sends the hub): integers as decimal strings. */
export function attestationMessageToJson(attestation: BalanceAttestation): AttestationJson["message"] {
  return {
    chain: String(attestation.chain),
    owner: attestation.owner,
    asset: attestation.asset,
    balance: attestation.balance.toString(),
    queryResultHash: attestation.queryResultHash,
    sourceBlock: attestation.sourceBlock.toString(),
    issuedAt: attestation.issuedAt.toString(),
  };
}

/** Parses a struct's JSON; the bytes32 fields in lower-case hex, one spelling to compare (the digest ignores case). */
export function attestationMessageFromJson(message: AttestationJson["message"]): BalanceAttestation {
  const chain = Number(message.chain);
  if (chain !== AttestedChain.ethereum && chain !== AttestedChain.solana) throw new Error(`unknown attested chain ${message.chain}`);
  return {
    chain,
    owner: message.owner.toLowerCase(),
    asset: message.asset.toLowerCase(),
    balance: BigInt(message.balance),
    queryResultHash: message.queryResultHash.toLowerCase(),
    sourceBlock: BigInt(message.sourceBlock),
    issuedAt: BigInt(message.issuedAt),
  };
}

const SECP256K1_HALF_N = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n;

/** The balance attestation's types as ethers takes them. */
function mutableTypes(): Record<string, Array<{ name: string; type: string }>> {
  return mutableTypesOf(LICENSED_BALANCE_ATTESTATION_TYPES);
}

/** ethers wants mutable arrays; the protocol's pinned definitions stay `as const`. */
export function mutableTypesOf(
  types: Record<string, ReadonlyArray<{ readonly name: string; readonly type: string }>>,
): Record<string, Array<{ name: string; type: string }>> {
  return Object.fromEntries(Object.entries(types).map(([name, fields]) => [name, fields.map((field) => ({ ...field }))]));
}

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
  if (!isHexString(signature, 65)) return undefined;
  try {
    const parsed = Signature.from(signature);
    if (BigInt(parsed.s) > SECP256K1_HALF_N) return undefined;
    return verifyTypedData(domain, mutableTypes(), licensedMessage(attestation, licenseIds), signature);
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
  return {
    domain: { name: domain.name, version: domain.version, chainId: Number(domain.chainId), verifyingContract: domain.verifyingContract },
    message: attestationMessageToJson(attestation),
    signatures: signatures.map(({ signer, licenseIds, signature }) => ({ signer, licenseIds: licenseIds.map(String), signature })),
  };
}

/** Parses the API's JSON form back (for clients, tests and the contract call's arguments). */
export function attestationFromJson(json: AttestationJson): {
  domain: AttestationDomain;
  attestation: BalanceAttestation;
  signatures: NodeSignature[];
} {
  return {
    domain: {
      name: json.domain.name,
      version: json.domain.version,
      chainId: BigInt(json.domain.chainId),
      verifyingContract: getAddress(json.domain.verifyingContract),
    },
    attestation: attestationMessageFromJson(json.message),
    signatures: json.signatures.map(({ signer, licenseIds, signature }) => ({
      signer: getAddress(signer),
      licenseIds: licenseIds.map(BigInt),
      signature,
    })),
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

/** ethers wants mutable arrays; the pinned definitions above stay `as const`. */
function mutableTypes(): Record<string, Array<{ name: string; type: string }>> {
  return Object.fromEntries(
    Object.entries(LICENSED_BALANCE_ATTESTATION_TYPES).map(([name, fields]) => [name, fields.map((field) => ({ ...field }))]),
  );
}

import {
  ATTESTATION_DOMAIN_NAME,
  ATTESTATION_DOMAIN_VERSION,
  LICENSED_BALANCE_ATTESTATION_TYPES,
  SIGNED_PRIMARY_TYPE,
  type AttestationJson,
} from "@avn/protocol/attestation";
import {
  CONDITION_SIGNED_PRIMARY_TYPE,
  LICENSED_CONDITION_ATTESTATION_TYPES,
  type ConditionAttestationJson,
} from "@avn/protocol/conditions";
import { balanceKind, conditionKind, type AttestationKind } from "@avn/protocol/attestation-kinds";
import { getAddress, hashTypedData, isAddress, isHex, type Address, type Hex } from "viem";

import { MalformedAttestationError } from "./errors.ts";

/**
 * The API's JSON form of both attestation kinds, turned into what viem's typed-data functions and the
 * `AttestationVerifier` ABI take: integers as bigints, the domain's chain id as a bigint, signers
 * checksummed. The type definitions are the protocol package's pinned ones, which a test checks against
 * the contract's type hashes and digests.
 */

/** Either kind of attestation, as the API serves it (`data.attestation`). */
export type AnyAttestationJson = AttestationJson | ConditionAttestationJson;

/** `IAttestationVerifier.BalanceAttestation`, as viem encodes it. */
export interface ContractBalanceAttestation {
  chain: number;
  owner: Hex;
  asset: Hex;
  balance: bigint;
  queryResultHash: Hex;
  sourceBlock: bigint;
  issuedAt: bigint;
}

/** `IAttestationVerifier.ConditionAttestation`, as viem encodes it. */
export interface ContractConditionAttestation {
  conditionHash: Hex;
  ownersHash: Hex;
  verdict: boolean;
  ethereumBlock: bigint;
  solanaSlot: bigint;
  issuedAt: bigint;
}

/** `IAttestationVerifier.NodeSignature`, as viem encodes it. */
export interface ContractNodeSignature {
  signer: Address;
  licenseIds: bigint[];
  signature: Hex;
}

/** The EIP-712 domain, as viem takes it. */
export interface ContractDomain {
  name: string;
  version: string;
  chainId: bigint;
  verifyingContract: Address;
}

/** The contract call's arguments for a balance attestation. */
export interface ContractBalanceAttestationArgs {
  kind: "balance";
  domain: ContractDomain;
  attestation: ContractBalanceAttestation;
  signatures: ContractNodeSignature[];
}

/** The contract call's arguments for a condition attestation (a signed verdict). */
export interface ContractConditionAttestationArgs {
  kind: "condition";
  domain: ContractDomain;
  attestation: ContractConditionAttestation;
  signatures: ContractNodeSignature[];
}

/** Whether `json` is a signed verdict (`POST /api/conditions?attest=true`) rather than a balance attestation. */
export function isConditionAttestation(json: AnyAttestationJson): json is ConditionAttestationJson {
  return typeof json.message === "object" && json.message !== null && "conditionHash" in json.message;
}

/**
 * The attestation as the contract takes it: `attestation` matches the Solidity struct (`BalanceAttestation`
 * or `ConditionAttestation`), `signatures` the `NodeSignature[]`, both with bigints, ready for viem's
 * `readContract` / `writeContract` or a contract of your own (`isAttestationValid(attestation, signatures,
 * maxAge)`, `GameItem.claimWithCondition(attestation, signatures, solanaOwner)`). Throws a
 * `MalformedAttestationError` whose `path` names the first field refused when the JSON is malformed.
 */
export function toContractAttestation(json: AttestationJson): ContractBalanceAttestationArgs;
export function toContractAttestation(json: ConditionAttestationJson): ContractConditionAttestationArgs;
export function toContractAttestation(json: AnyAttestationJson): ContractBalanceAttestationArgs | ContractConditionAttestationArgs;
export function toContractAttestation(json: AnyAttestationJson): ContractBalanceAttestationArgs | ContractConditionAttestationArgs {
  if (typeof json !== "object" || json === null) throw new MalformedAttestationError("", "must be an object");
  const domain = domainOf(json.domain);
  const signatures = signaturesOf(json.signatures);
  if (isConditionAttestation(json))
    return { kind: "condition", domain, attestation: messageOf(conditionKind, json.message) as ContractConditionAttestation, signatures };
  return { kind: "balance", domain, attestation: messageOf(balanceKind, json.message) as ContractBalanceAttestation, signatures };
}

/** The typed data of a balance attestation's signature (`LicensedBalanceAttestation`). */
export interface BalanceTypedData {
  domain: ContractDomain;
  types: typeof LICENSED_BALANCE_ATTESTATION_TYPES;
  primaryType: typeof SIGNED_PRIMARY_TYPE;
  message: { attestation: ContractBalanceAttestation; licenseIds: bigint[] };
}

/** The typed data of a signed verdict's signature (`LicensedConditionAttestation`). */
export interface ConditionTypedData {
  domain: ContractDomain;
  types: typeof LICENSED_CONDITION_ATTESTATION_TYPES;
  primaryType: typeof CONDITION_SIGNED_PRIMARY_TYPE;
  message: { attestation: ContractConditionAttestation; licenseIds: bigint[] };
}

/**
 * The EIP-712 typed data one node signed: the attestation with that signature's own `licenseIds`, in the
 * order listed, under the attestation's domain. Pass it to viem's `hashTypedData`,
 * `recoverTypedDataAddress` or `signTypedData`. Throws a `MalformedAttestationError` as
 * `toContractAttestation` does, or with `path` `licenseIds[i]` for a license id that is not a uint256.
 */
export function attestationTypedData(json: AttestationJson, licenseIds: readonly (bigint | string | number)[]): BalanceTypedData;
export function attestationTypedData(json: ConditionAttestationJson, licenseIds: readonly (bigint | string | number)[]): ConditionTypedData;
export function attestationTypedData(
  json: AnyAttestationJson,
  licenseIds: readonly (bigint | string | number)[],
): BalanceTypedData | ConditionTypedData;
export function attestationTypedData(
  json: AnyAttestationJson,
  licenseIds: readonly (bigint | string | number)[],
): BalanceTypedData | ConditionTypedData {
  return typedDataOf(
    toContractAttestation(json),
    licenseIds.map((id, index) => uintAt(`licenseIds[${index}]`, id)),
  );
}

function typedDataOf(
  args: ContractBalanceAttestationArgs | ContractConditionAttestationArgs,
  licenseIds: bigint[],
): BalanceTypedData | ConditionTypedData {
  if (args.kind === "condition")
    return {
      domain: args.domain,
      types: LICENSED_CONDITION_ATTESTATION_TYPES,
      primaryType: CONDITION_SIGNED_PRIMARY_TYPE,
      message: { attestation: args.attestation, licenseIds },
    };
  return {
    domain: args.domain,
    types: LICENSED_BALANCE_ATTESTATION_TYPES,
    primaryType: SIGNED_PRIMARY_TYPE,
    message: { attestation: args.attestation, licenseIds },
  };
}

/**
 * The EIP-712 digest a node signs for `json` with `licenseIds` (in that order): what
 * `AttestationVerifier.hashAttestation` / `hashConditionAttestation` return for the same struct and list.
 * Throws as `attestationTypedData` does.
 */
export function attestationDigest(json: AnyAttestationJson, licenseIds: readonly (bigint | string | number)[]): Hex {
  return digestOf(
    toContractAttestation(json),
    licenseIds.map((id, index) => uintAt(`licenseIds[${index}]`, id)),
  );
}

/** The digest of parsed arguments with `licenseIds` (verify.ts recovers each signature's signer from it). */
export function digestOf(args: ContractBalanceAttestationArgs | ContractConditionAttestationArgs, licenseIds: bigint[]): Hex {
  const typedData = typedDataOf(args, licenseIds);
  // One call per kind: viem's types tie `message` to `types` and `primaryType`.
  return typedData.primaryType === SIGNED_PRIMARY_TYPE ? hashTypedData(typedData) : hashTypedData(typedData);
}

/** Whether the domain is the one `AttestationVerifier` signs under (its name and version are fixed at deployment). */
export function isAttestationDomain(domain: ContractDomain): boolean {
  return domain.name === ATTESTATION_DOMAIN_NAME && domain.version === ATTESTATION_DOMAIN_VERSION;
}

/*//////////////////////////////////////////////////////////////
                         FIELDS OF THE JSON
//////////////////////////////////////////////////////////////*/

function domainOf(domain: AnyAttestationJson["domain"]): ContractDomain {
  if (typeof domain !== "object" || domain === null) throw new MalformedAttestationError("domain", "must be an object");
  if (typeof domain.name !== "string") throw new MalformedAttestationError("domain.name", "must be a string");
  if (typeof domain.version !== "string") throw new MalformedAttestationError("domain.version", "must be a string");
  if (typeof domain.verifyingContract !== "string" || !isAddress(domain.verifyingContract, { strict: false }))
    throw new MalformedAttestationError("domain.verifyingContract", "must be an address");
  return {
    name: domain.name,
    version: domain.version,
    chainId: uintAt("domain.chainId", domain.chainId),
    verifyingContract: getAddress(domain.verifyingContract),
  };
}

function signaturesOf(signatures: AnyAttestationJson["signatures"]): ContractNodeSignature[] {
  if (!Array.isArray(signatures)) throw new MalformedAttestationError("signatures", "must be an array");
  return signatures.map((entry, index) => {
    const path = `signatures[${index}]`;
    if (typeof entry !== "object" || entry === null) throw new MalformedAttestationError(path, "must be an object");
    if (typeof entry.signer !== "string" || !isAddress(entry.signer, { strict: false }))
      throw new MalformedAttestationError(`${path}.signer`, "must be an address");
    if (!Array.isArray(entry.licenseIds)) throw new MalformedAttestationError(`${path}.licenseIds`, "must be an array");
    if (typeof entry.signature !== "string" || !isHex(entry.signature))
      throw new MalformedAttestationError(`${path}.signature`, "must be 0x-prefixed hex");
    return {
      signer: getAddress(entry.signer),
      licenseIds: entry.licenseIds.map((id, j) => uintAt(`${path}.licenseIds[${j}]`, id as unknown)),
      signature: entry.signature,
    };
  });
}

/**
 * The struct of a message of `kind`, checked with the kind's own schema (`@avn/protocol/attestation-kinds`:
 * the one the hub checks the nodes' frames with), bytes32 fields in lower-case hex. A verdict that is not a
 * JSON boolean is refused there: `"false"` is a truthy string.
 */
function messageOf<S>(kind: AttestationKind<S, unknown>, message: unknown): S {
  const parsed = kind.messageSchema.safeParse(message);
  if (!parsed.success) {
    const [issue] = parsed.error.issues;
    const path = ["message", ...issue.path.map(String)].join(".");
    throw new MalformedAttestationError(path, issue.path.length === 0 ? "must be an object" : issue.message);
  }
  return kind.fromMessage(parsed.data);
}

/**
 * An unsigned integer given as a decimal string (the API's form), a bigint or a safe integer. Strict, where
 * `BigInt()` is not: `BigInt("")` is 0 and `BigInt("0x10")` is 16, and neither is what a node signed.
 */
function uintAt(path: string, value: unknown, bits = 256): bigint {
  let parsed: bigint | undefined;
  if (typeof value === "bigint") parsed = value;
  else if (typeof value === "number" && Number.isSafeInteger(value)) parsed = BigInt(value);
  else if (typeof value === "string" && /^[0-9]{1,78}$/.test(value)) parsed = BigInt(value);
  if (parsed === undefined || parsed < 0n || parsed >= 2n ** BigInt(bits))
    throw new MalformedAttestationError(path, `must be a uint${bits}, written as a decimal string`);
  return parsed;
}

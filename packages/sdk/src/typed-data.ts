import type { AttestationJson, ConditionAttestationJson } from "@avn/protocol/attestation-kinds";
import {
  ATTESTATION_DOMAIN_NAME,
  ATTESTATION_DOMAIN_VERSION,
  LICENSED_BALANCE_ATTESTATION_TYPES,
  SIGNED_PRIMARY_TYPE,
} from "@avn/protocol/attestation";
import { CONDITION_SIGNED_PRIMARY_TYPE, LICENSED_CONDITION_ATTESTATION_TYPES } from "@avn/protocol/conditions";
import { balanceAttestationJsonSchema, balanceKind, conditionAttestationJsonSchema, conditionKind } from "@avn/protocol/attestation-kinds";

import { getAddress, hashTypedData, type Address, type Hex } from "viem";

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
  // Whatever a caller passes: a null or a string is not a verdict (and is refused as malformed after this).
  const message: unknown = typeof json === "object" && json !== null ? json.message : undefined;
  return typeof message === "object" && message !== null && "conditionHash" in message;
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
  return isConditionAttestation(json)
    ? argsOf(conditionKind, conditionAttestationJsonSchema, json)
    : argsOf(balanceKind, balanceAttestationJsonSchema, json);
}

/**
 * The contract's arguments from `json`, checked with its kind's own schema (`@avn/protocol/attestation-kinds`:
 * the API's response schema is generated from it).
 */
function argsOf<Kind extends typeof balanceKind | typeof conditionKind>(
  kind: Kind,
  schema: typeof balanceAttestationJsonSchema | typeof conditionAttestationJsonSchema,
  json: unknown,
) {
  // Either schema has the same domain and signatures; the message is the kind's, read by the kind below.
  const checked = checkedJson(schema as typeof balanceAttestationJsonSchema, json);
  return {
    kind: kind.name,
    domain: domainOf(checked.domain),
    attestation: kind.fromMessage(checked.message as never),
    signatures: signaturesOf(checked.signatures),
  } as Kind extends typeof conditionKind ? ContractConditionAttestationArgs : ContractBalanceAttestationArgs;
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
  return {
    name: domain.name,
    version: domain.version,
    chainId: BigInt(domain.chainId),
    verifyingContract: getAddress(domain.verifyingContract),
  };
}

function signaturesOf(signatures: AnyAttestationJson["signatures"]): ContractNodeSignature[] {
  return signatures.map((entry) => ({
    signer: getAddress(entry.signer),
    licenseIds: entry.licenseIds.map(BigInt),
    signature: entry.signature as Hex,
  }));
}

/**
 * `json` checked with its kind's schema; the first problem as a `MalformedAttestationError` whose path names
 * the field as a caller writes it (`signatures[1].signer`). A verdict that is not a JSON boolean is refused
 * there: `"false"` is a truthy string.
 */
function checkedJson<T>(
  schema: {
    safeParse(
      value: unknown,
    ): { success: true; data: T } | { success: false; error: { issues: readonly { path: readonly PropertyKey[]; message: string }[] } };
  },
  json: unknown,
): T {
  const parsed = schema.safeParse(json);
  if (parsed.success) return parsed.data;
  const [issue] = parsed.error.issues;
  const path = issue.path
    .map((key, index) => (typeof key === "number" ? `[${key}]` : index === 0 ? String(key) : `.${String(key)}`))
    .join("");
  throw new MalformedAttestationError(path, issue.message);
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

import {
  address,
  getAddressEncoder,
  getBase58Encoder,
  getPublicKeyFromAddress,
  isAddress as isSolanaAddress,
  signatureBytes,
  verifySignature,
  type Address,
} from "@solana/kit";
import { ed25519 } from "@noble/curves/ed25519";
import canonicalize from "canonicalize";
import { encodeAbiParameters, getAddress, keccak256, pad, toBytes, toHex, type Hex } from "viem";
import { AvnError } from "./errors.ts";

/**
 * Signed verdicts over holding conditions (`POST /api/conditions`, docs/conditions.md): the request's
 * format and its checks, the normal form and its hash, the owners' hash, the Solana link message, the
 * evaluation, and the EIP-712 struct a quorum of nodes signs. The API, the nodes, the web app and the SDK
 * share this one definition, so the hash a game pins is the hash every part computes.
 */

/** The most leaves a condition may have, and the most combinators above any leaf. */
export const MAX_CONDITION_LEAVES = 16;
export const MAX_CONDITION_DEPTH = 4;

/** The largest value a `uint256` holds: amounts and ERC-1155 ids are raw `uint256` units. */
const MAX_UINT256 = 2n ** 256n - 1n;

export interface EthereumLeaf {
  chain: "ethereum";
  /** Lower-case hex in the normal form. */
  contract_address: string;
  /** Decimal; present for an ERC-1155 balance. */
  token_id?: string;
  /** Inclusive, raw units, decimal without leading zeros; `"1"` when the request left it out. */
  min: string;
  max?: string;
  /**
   * Count what the wallets that delegated to the owner through delegate.xyz v2 hold (`@avn/protocol/delegations`).
   * In the normal form only when true (like `max`), so a leaf without it keeps its hash.
   */
  delegations?: true;
}

export interface SolanaLeaf {
  chain: "solana";
  /** Base58 as given. */
  token_mint_address: string;
  min: string;
  max?: string;
}

export type ConditionLeaf = EthereumLeaf | SolanaLeaf;

export type ConditionNode =
  { all: ConditionNode[] } | { any: ConditionNode[] } | { atLeast: number; of: ConditionNode[] } | { not: ConditionNode } | ConditionLeaf;

export interface ConditionOwners {
  /** Lower-case hex in the normal form. */
  ethereum?: string;
  /** Base58. */
  solana?: string;
}

/** A request to `POST /api/conditions` after its checks: the condition in its normal form. */
export interface ConditionRequest {
  owners: ConditionOwners;
  condition: ConditionNode;
  /** With both owners: the Solana owner's base58 ed25519 signature of `linkMessage`. */
  links?: { solana: string };
  /** Whether the answer lists each leaf's balance (`leaves`); `reveal: false` leaves them out. */
  reveal: boolean;
}

/** Bad input, with the path of the offending part (`condition.all[1].of[0].min`): the API's 400. */
export class ConditionInputError extends AvnError<"CONDITION_INPUT"> {
  readonly path: string;

  constructor(path: string, problem: string) {
    super("CONDITION_INPUT", `${path} ${problem}`);
    this.name = "ConditionInputError";
    this.path = path;
  }
}

/**
 * Checks a request body and returns it in its normal form. Throws `ConditionInputError` naming the first
 * bad part. It checks the form only: the link's signature is checked by `verifySolanaLink`.
 */
export function parseConditionRequest(body: unknown): ConditionRequest {
  const fields = objectAt("body", body, ["owners", "condition", "links", "reveal"]);
  const ownersBody = objectAt("owners", fields.owners, ["ethereum", "solana"]);
  const owners: ConditionOwners = {};
  if (ownersBody.ethereum !== undefined) owners.ethereum = evmAddressAt("owners.ethereum", ownersBody.ethereum);
  if (ownersBody.solana !== undefined) owners.solana = solanaAddressAt("owners.solana", ownersBody.solana);
  // `ownersHash` writes an absent owner as zero: a zero owner would be indistinguishable from none.
  if (owners.ethereum !== undefined && BigInt(owners.ethereum) === 0n)
    throw new ConditionInputError("owners.ethereum", "must not be the zero address");
  if (
    owners.solana !== undefined &&
    getAddressEncoder()
      .encode(address(owners.solana))
      .every((byte) => byte === 0)
  )
    throw new ConditionInputError("owners.solana", "must not be the all-zero key (the System Program)");
  if (owners.ethereum === undefined && owners.solana === undefined)
    throw new ConditionInputError("owners", "must name an ethereum or a solana owner");
  if (fields.condition === undefined) throw new ConditionInputError("condition", "is required");
  const condition = normalizeCondition(fields.condition);
  conditionLeaves(condition).forEach((leaf, index) => {
    if (owners[leaf.chain] === undefined)
      throw new ConditionInputError(
        leafPaths(condition)[index],
        `is ${leaf.chain === "ethereum" ? "an" : "a"} ${leaf.chain} leaf, but owners.${leaf.chain} is not given`,
      );
  });
  const request: ConditionRequest = { owners, condition, reveal: true };
  const both = owners.ethereum !== undefined && owners.solana !== undefined;
  if (fields.links !== undefined || both) {
    const links = objectAt("links", fields.links, ["solana"]);
    if (!both) throw new ConditionInputError("links", "are for requests that name both an ethereum and a solana owner");
    if (typeof links.solana !== "string" || !isSolanaSignature(links.solana))
      throw new ConditionInputError("links.solana", "must be the Solana owner's base58 ed25519 signature of the link message");
    request.links = { solana: links.solana };
  }
  if (fields.reveal !== undefined) {
    if (typeof fields.reveal !== "boolean") throw new ConditionInputError("reveal", "must be true or false");
    request.reveal = fields.reveal;
  }
  return request;
}

/**
 * A condition in its normal form, checked: EVM addresses in lower case, decimals without leading zeros,
 * every leaf with its `min` (`"1"` by default) and `max` only when given; at most `MAX_CONDITION_LEAVES`
 * leaves and `MAX_CONDITION_DEPTH` combinators above any leaf.
 */
export function normalizeCondition(node: unknown, path = "condition"): ConditionNode {
  const normal = normalizeNode(node, path, 0);
  const leaves = conditionLeaves(normal).length;
  if (leaves > MAX_CONDITION_LEAVES)
    throw new ConditionInputError(path, `has ${leaves} leaves; at most ${MAX_CONDITION_LEAVES} are allowed`);
  return normal;
}

function normalizeNode(node: unknown, path: string, depth: number): ConditionNode {
  if (typeof node !== "object" || node === null || Array.isArray(node)) throw new ConditionInputError(path, "must be an object");
  const record = node as Record<string, unknown>;
  if ("chain" in record) return normalizeLeaf(record, path);
  if (depth >= MAX_CONDITION_DEPTH)
    throw new ConditionInputError(
      path,
      `is a combinator below ${MAX_CONDITION_DEPTH} others; conditions nest at most ${MAX_CONDITION_DEPTH} deep`,
    );
  if ("all" in record) {
    const fields = objectAt(path, record, ["all"]);
    return { all: listAt(`${path}.all`, fields.all, depth) };
  }
  if ("any" in record) {
    const fields = objectAt(path, record, ["any"]);
    return { any: listAt(`${path}.any`, fields.any, depth) };
  }
  if ("atLeast" in record || "of" in record) {
    const fields = objectAt(path, record, ["atLeast", "of"]);
    const of = listAt(`${path}.of`, fields.of, depth);
    const atLeast = fields.atLeast;
    if (typeof atLeast !== "number" || !Number.isInteger(atLeast) || atLeast < 1 || atLeast > of.length)
      throw new ConditionInputError(`${path}.atLeast`, `must be an integer from 1 to ${of.length} (the length of of)`);
    return { atLeast, of };
  }
  if ("not" in record) {
    const fields = objectAt(path, record, ["not"]);
    return { not: normalizeNode(fields.not, `${path}.not`, depth + 1) };
  }
  throw new ConditionInputError(path, 'must be a leaf (with "chain") or one of {"all"}, {"any"}, {"atLeast", "of"}, {"not"}');
}

function listAt(path: string, value: unknown, depth: number): ConditionNode[] {
  if (!Array.isArray(value) || value.length === 0) throw new ConditionInputError(path, "must be a non-empty array of conditions");
  // More than the leaf cap cannot be valid: refused before recursing into a huge array.
  if (value.length > MAX_CONDITION_LEAVES)
    throw new ConditionInputError(path, `has ${value.length} entries; at most ${MAX_CONDITION_LEAVES} leaves are allowed`);
  return value.map((child, index) => normalizeNode(child, `${path}[${index}]`, depth + 1));
}

function normalizeLeaf(record: Record<string, unknown>, path: string): ConditionLeaf {
  let leaf: ConditionLeaf;
  if (record.chain === "ethereum") {
    const fields = objectAt(path, record, ["chain", "contract_address", "token_id", "min", "max", "delegations"]);
    leaf = { chain: "ethereum", contract_address: evmAddressAt(`${path}.contract_address`, fields.contract_address), min: "1" };
    if (fields.token_id !== undefined) leaf.token_id = decimalAt(`${path}.token_id`, fields.token_id);
    if (fields.delegations !== undefined && typeof fields.delegations !== "boolean")
      throw new ConditionInputError(`${path}.delegations`, "must be true or false");
    if (fields.delegations === true) leaf.delegations = true;
  } else if (record.chain === "solana") {
    if (record.delegations !== undefined)
      throw new ConditionInputError(`${path}.delegations`, "is for Ethereum leaves only: delegate.xyz delegations are read on Ethereum");
    const fields = objectAt(path, record, ["chain", "token_mint_address", "min", "max"]);
    leaf = { chain: "solana", token_mint_address: solanaAddressAt(`${path}.token_mint_address`, fields.token_mint_address), min: "1" };
  } else {
    throw new ConditionInputError(`${path}.chain`, 'must be "ethereum" or "solana"');
  }
  if (record.min !== undefined) leaf.min = decimalAt(`${path}.min`, record.min);
  if (record.max !== undefined) {
    leaf.max = decimalAt(`${path}.max`, record.max);
    if (BigInt(leaf.max) < BigInt(leaf.min)) throw new ConditionInputError(`${path}.max`, `must not be below min (${leaf.min})`);
  }
  return leaf;
}

/** The leaves in order of appearance (depth first, left to right): the order of the answer's `leaves`. */
export function conditionLeaves(node: ConditionNode): ConditionLeaf[] {
  if ("chain" in node) return [node];
  if ("not" in node) return conditionLeaves(node.not);
  return childrenOf(node).flatMap(conditionLeaves);
}

/** Each leaf's path (`condition.all[0]`), in the order of `conditionLeaves`. */
export function leafPaths(node: ConditionNode, path = "condition"): string[] {
  if ("chain" in node) return [path];
  if ("not" in node) return leafPaths(node.not, `${path}.not`);
  const key = "all" in node ? "all" : "any" in node ? "any" : "of";
  return childrenOf(node).flatMap((child, index) => leafPaths(child, `${path}.${key}[${index}]`));
}

function childrenOf(node: Exclude<ConditionNode, ConditionLeaf | { not: ConditionNode }>): ConditionNode[] {
  return "all" in node ? node.all : "any" in node ? node.any : node.of;
}

/** Whether a leaf holds for `balance`: `min ≤ balance`, and `balance ≤ max` when it has one. */
export function leafHolds(leaf: ConditionLeaf, balance: bigint): boolean {
  return balance >= BigInt(leaf.min) && (leaf.max === undefined || balance <= BigInt(leaf.max));
}

/** The verdict of `node`, given whether each of its leaves holds (in the order of `conditionLeaves`). */
export function evaluateCondition(node: ConditionNode, holds: readonly boolean[]): boolean {
  let next = 0;
  const visit = (current: ConditionNode): boolean => {
    if ("chain" in current) {
      if (next >= holds.length) throw new RangeError("fewer leaf results than leaves");
      return holds[next++];
    }
    if ("not" in current) return !visit(current.not);
    // Every child is visited (no short cut), so each leaf consumes its own result.
    const results = childrenOf(current).map(visit);
    if ("all" in current) return results.every(Boolean);
    if ("any" in current) return results.some(Boolean);
    return results.filter(Boolean).length >= current.atLeast;
  };
  const verdict = visit(node);
  if (next !== holds.length) throw new RangeError("more leaf results than leaves");
  return verdict;
}

/** The RFC 8785 (JCS) canonical JSON of a condition's normal form: what `conditionHash` hashes. */
export function canonicalCondition(node: ConditionNode): string {
  const text = canonicalize(node);
  if (text === undefined) throw new TypeError("a condition always canonicalizes");
  return text;
}

/** keccak-256 of the UTF-8 bytes of the condition's canonical JSON (normalised first). */
export function conditionHash(condition: unknown): Hex {
  return keccak256(toBytes(canonicalCondition(normalizeCondition(condition))));
}

/** `keccak256(abi.encode(bytes32 ethereumOwner, bytes32 solanaOwner))`, an absent owner zero. */
export function ownersHash(owners: { ethereum?: string; solana?: string }): Hex {
  const ethereum = owners.ethereum === undefined ? ZERO_WORD : pad(owners.ethereum.toLowerCase() as Hex, { size: 32 });
  const solana = owners.solana === undefined ? ZERO_WORD : toHex(Uint8Array.from(getAddressEncoder().encode(address(owners.solana))));
  return keccak256(encodeAbiParameters([{ type: "bytes32" }, { type: "bytes32" }], [ethereum, solana]));
}

const ZERO_WORD: Hex = `0x${"0".repeat(64)}`;

/** The text the Solana owner signs to link itself to the Ethereum owner, on one L2 (the domain's chain). */
export function linkMessage(ethereumOwner: string, l2ChainId: bigint | number): string {
  return `Asset Verification Network: link ${getAddress(ethereumOwner)} on chain ${l2ChainId.toString()}`;
}

/** Whether `signature` (base58) is the Solana owner's ed25519 signature of `linkMessage(ethereum, l2ChainId)`. */
export async function verifySolanaLink(
  owners: { ethereum: string; solana: string },
  signature: string,
  l2ChainId: bigint | number,
): Promise<boolean> {
  if (!isSolanaSignature(signature)) return false;
  try {
    // A key of small order (the all-zero key among them) has "signatures" anyone can make: WebCrypto's
    // Ed25519 accepts them, so a link to such a key would prove nothing. Refused before verifying.
    if (ed25519.ExtendedPoint.fromHex(Uint8Array.from(getAddressEncoder().encode(address(owners.solana)))).isSmallOrder()) return false;
    const bytes = signatureBytes(Uint8Array.from(getBase58Encoder().encode(signature)));
    const message = new TextEncoder().encode(linkMessage(owners.ethereum, l2ChainId));
    return await verifySignature(await getPublicKeyFromAddress(owners.solana as Address), bytes, message);
  } catch {
    return false;
  }
}

function isSolanaSignature(value: string): boolean {
  if (!/^[1-9A-HJ-NP-Za-km-z]{64,88}$/.test(value)) return false;
  return getBase58Encoder().encode(value).length === 64;
}

/*//////////////////////////////////////////////////////////////
                        THE SIGNED STRUCT (EIP-712)
//////////////////////////////////////////////////////////////*/

/** Pinned, like the balance attestation's (a test checks them against the contract's type hashes). */
export const CONDITION_ATTESTATION_TYPE =
  "ConditionAttestation(bytes32 conditionHash,bytes32 ownersHash,bool verdict,uint64 ethereumBlock,uint64 solanaSlot,uint64 issuedAt)";

export const CONDITION_ATTESTATION_TYPES = {
  ConditionAttestation: [
    { name: "conditionHash", type: "bytes32" },
    { name: "ownersHash", type: "bytes32" },
    { name: "verdict", type: "bool" },
    { name: "ethereumBlock", type: "uint64" },
    { name: "solanaSlot", type: "uint64" },
    { name: "issuedAt", type: "uint64" },
  ],
} as const;

/** What each node signs: the verdict with the ids of the licenses it signs for (see the balance attestation's). */
export const LICENSED_CONDITION_ATTESTATION_TYPE = `LicensedConditionAttestation(ConditionAttestation attestation,uint256[] licenseIds)${CONDITION_ATTESTATION_TYPE}`;

export const LICENSED_CONDITION_ATTESTATION_TYPES = {
  LicensedConditionAttestation: [
    { name: "attestation", type: "ConditionAttestation" },
    { name: "licenseIds", type: "uint256[]" },
  ],
  ...CONDITION_ATTESTATION_TYPES,
} as const;

export const CONDITION_SIGNED_PRIMARY_TYPE = "LicensedConditionAttestation";

export interface ConditionAttestation {
  conditionHash: string;
  ownersHash: string;
  verdict: boolean;
  /** The Ethereum block every Ethereum leaf was read at (0 without one). */
  ethereumBlock: bigint;
  /** The minimum Solana slot every Solana leaf was read at or after (0 without one). */
  solanaSlot: bigint;
  issuedAt: bigint;
}

/*//////////////////////////////////////////////////////////////
                             FIELD CHECKS
//////////////////////////////////////////////////////////////*/

/** `value` as an object with no keys but `allowed` (absent: an empty object). */
function objectAt(path: string, value: unknown, allowed: readonly string[]): Record<string, unknown> {
  if (value === undefined) return {};
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new ConditionInputError(path, "must be an object");
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) throw new ConditionInputError(path === "body" ? key : `${path}.${key}`, "is not a known field");
  }
  return value as Record<string, unknown>;
}

function evmAddressAt(path: string, value: unknown): string {
  if (typeof value !== "string" || !/^0x[0-9a-fA-F]{40}$/.test(value))
    throw new ConditionInputError(path, "must be 0x followed by 40 hexadecimal digits");
  const digits = value.slice(2);
  // Mixed case must be a valid EIP-55 checksum (anything else is a typo), as on the balance routes.
  if (digits !== digits.toLowerCase() && digits !== digits.toUpperCase() && getAddress(value.toLowerCase()) !== value)
    throw new ConditionInputError(path, "has an invalid EIP-55 checksum");
  return value.toLowerCase();
}

function solanaAddressAt(path: string, value: unknown): string {
  if (typeof value !== "string" || value.length > 44 || !isSolanaAddress(value))
    throw new ConditionInputError(path, "must be a base58 Solana address of 32 bytes");
  return value;
}

function decimalAt(path: string, value: unknown): string {
  if (typeof value !== "string" || !/^\d{1,78}$/.test(value)) throw new ConditionInputError(path, "must be a decimal string (digits only)");
  const parsed = BigInt(value);
  if (parsed > MAX_UINT256) throw new ConditionInputError(path, "must be below 2^256");
  return parsed.toString();
}

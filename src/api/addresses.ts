import { getAddressEncoder, isAddress as isSolanaAddress } from "@solana/kit";
import { getAddress } from "ethers";

import { ApiError } from "./api-error.ts";

const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/**
 * An EVM address as the API accepts it: 0x and 40 hex digits; all lower-case or all upper-case, or
 * mixed case that is a valid EIP-55 checksum (a mixed-case address with a wrong checksum is a typo).
 */
export function parseEvmAddress(field: string, value: string): string {
  if (!EVM_ADDRESS.test(value)) throw new ApiError(400, `${field} must be 0x followed by 40 hexadecimal digits`);
  const digits = value.slice(2);
  if (digits !== digits.toLowerCase() && digits !== digits.toUpperCase() && !hasValidChecksum(value)) {
    throw new ApiError(400, `${field} has an invalid EIP-55 checksum`);
  }
  // Lower case is canonical here (cache keys, calls): checksumming costs a keccak per address.
  return value.toLowerCase();
}

const DECIMAL_UINT256 = /^[0-9]{1,78}$/; // 2^256 - 1 has 78 digits
const UINT256_LIMIT = 2n ** 256n;

/**
 * A uint256 written as a decimal string (an ERC-1155 `token_id`): ASCII digits only, at most 78 of them,
 * below 2^256; leading zeros are accepted ("007" is 7). A string, not a JSON number: ids above 2^53 would
 * be rounded by most clients' JSON. The value is returned as a bigint; its `toString()` is the normalised
 * spelling.
 */
export function parseDecimalUint256(field: string, value: string): bigint {
  // The length is bounded before BigInt parses it.
  if (DECIMAL_UINT256.test(value)) {
    const parsed = BigInt(value);
    if (parsed < UINT256_LIMIT) return parsed;
  }
  throw new ApiError(400, `${field} must be a decimal string of digits only (at most 78), below 2^256`);
}

/** Block numbers are uint64 on every chain this API reads. */
const UINT64_LIMIT = 2n ** 64n;
const DECIMAL_UINT64 = /^[0-9]{1,20}$/;

/** A block number: a JSON integer (a safe one: larger numbers lost their digits when parsed) or a decimal string, below 2^64. */
export function parseBlockNumber(field: string, value: string | number): bigint {
  if (typeof value === "number" ? Number.isSafeInteger(value) && value >= 0 : DECIMAL_UINT64.test(value)) {
    const parsed = BigInt(value);
    if (parsed < UINT64_LIMIT) return parsed;
  }
  throw new ApiError(400, `${field} must be a block number: a non-negative JSON integer or a decimal string of digits only, below 2^64`);
}

/** A Solana address: base58 that decodes to exactly 32 bytes. */
export function parseSolanaAddress(field: string, value: string): string {
  if (validSolanaAddresses.has(value)) return value;
  if (!isSolanaAddress(value) || getAddressEncoder().encode(value).length !== 32) {
    throw new ApiError(400, `${field} must be a base58 Solana address of 32 bytes`);
  }
  remember(validSolanaAddresses, value);
  return value;
}

/**
 * Addresses already found valid: a mixed-case EVM address's checksum costs a keccak, a Solana address's
 * check a base58 decoding, and clients send the same few addresses again and again. Only valid ones are
 * kept (a flood of bad input fills nothing); bounded, and started over when full.
 */
const validChecksums = new Set<string>();
const validSolanaAddresses = new Set<string>();
const MAX_REMEMBERED = 10_000;

function remember(set: Set<string>, value: string): void {
  if (set.size >= MAX_REMEMBERED) set.clear();
  set.add(value);
}

function hasValidChecksum(value: string): boolean {
  if (validChecksums.has(value)) return true;
  let valid: boolean;
  try {
    valid = getAddress(value) === value; // ethers throws on a mixed-case address with a bad checksum
  } catch {
    valid = false;
  }
  if (valid) remember(validChecksums, value);
  return valid;
}

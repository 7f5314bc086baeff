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

/** A Solana address: base58 that decodes to exactly 32 bytes. */
export function parseSolanaAddress(field: string, value: string): string {
  if (!isSolanaAddress(value) || getAddressEncoder().encode(value).length !== 32) {
    throw new ApiError(400, `${field} must be a base58 Solana address of 32 bytes`);
  }
  return value;
}

function hasValidChecksum(value: string): boolean {
  try {
    return getAddress(value) === value; // ethers throws on a mixed-case address with a bad checksum
  } catch {
    return false;
  }
}

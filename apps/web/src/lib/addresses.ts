import { getAddress, isAddress, type Address } from "viem";

/**
 * Reads an address as typed: valid, checksum-correct when mixed-case (a wrong checksum means a typo),
 * returned checksummed; nothing for an empty field (not yet a mistake).
 */
export function parseAddressInput(input: string): { address?: Address; problem?: string } {
  const text = input.trim();
  if (text === "") return {};
  if (!isAddress(text, { strict: false })) return { problem: "Not an address: 0x followed by 40 hexadecimal digits." };
  // A mixed-case address carries an EIP-55 checksum; all lower or all upper case carries none.
  if (text !== text.toLowerCase() && text.slice(2) !== text.slice(2).toUpperCase() && !isAddress(text, { strict: true })) {
    return { problem: "The address's checksum does not match: check it for a typo." };
  }
  return { address: getAddress(text) };
}

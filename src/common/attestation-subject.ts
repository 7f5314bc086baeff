import { address, getAddressEncoder } from "@solana/kit";
import { hexlify, zeroPadValue } from "ethers";

import { AttestedChain } from "@avn/protocol/attestation";

/**
 * The attestation's `owner` and `asset` (bytes32) for a query, encoded as the registry encodes job
 * subjects: an EVM address left-padded, a Solana public key's 32 bytes. Lower-case hex, one spelling, so
 * the hub and the nodes build byte-identical structs. In src/common, which both services import (and
 * the node's container image carries).
 */
export function encodeSubject(query: { chain: number; owner: string; asset: string }): { owner: string; asset: string } {
  const encode =
    query.chain === AttestedChain.ethereum
      ? (value: string) => zeroPadValue(value.toLowerCase(), 32)
      : (value: string) => hexlify(Uint8Array.from(getAddressEncoder().encode(address(value))));
  return { owner: encode(query.owner).toLowerCase(), asset: encode(query.asset).toLowerCase() };
}

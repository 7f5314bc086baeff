import { keccak256 } from "ethers";

/**
 * The keccak-256 of a QueryResult's bytes: the commitment the verification registry stores, votes on and
 * emits instead of the bytes themselves (which the API serves). It accepts the API's two spellings: the
 * EVM word as `0x`-prefixed hex, the Solana accounts' data as bare lower-case hex (the empty string when
 * the owner has no account, whose hash is keccak256 of no bytes).
 */
export function queryResultHash(queryResult: string): string {
  const hex = queryResult.startsWith("0x") ? queryResult : `0x${queryResult}`;
  if (!/^0x([0-9a-fA-F]{2})*$/.test(hex)) throw new Error("a QueryResult is hex bytes");
  return keccak256(hex);
}

import { getAddress, slice, type Hex } from "viem";

const BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

/** A 32-byte Solana key in base58, the form explorers and wallets show (viem has no base58 codec). */
export function base58(hex: Hex): string {
  let value = BigInt(hex);
  let out = "";
  while (value > 0n) {
    out = BASE58[Number(value % 58n)] + out;
    value /= 58n;
  }
  // Each leading zero byte is written as a leading "1".
  for (let i = 2; i < hex.length && hex.slice(i, i + 2) === "00"; i += 2) out = `1${out}`;
  return out;
}

/** Chain ids of the registry's jobs: 0 = Ethereum, 1 = Solana. */
export function chainKind(chain: number): string {
  return chain === 0 ? "EVM" : chain === 1 ? "Solana" : `Chain ${chain}`;
}

/** An owner or asset as the registry encodes it (EVM addresses left-padded into bytes32) in its chain's usual form. */
export function subjectText(chain: number, value: Hex): string {
  return chain === 0 ? getAddress(slice(value, 12)) : chain === 1 ? base58(value) : value;
}

import type { FeeData } from "ethers";

/** The two EIP-1559 fee fields of a transaction. */
export interface Fees {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

// geth and anvil accept a replacement only when both fee fields rise by at least 10%: 12.5% clears it.
const BUMP_NUMERATOR = 1125n;
const BUMP_DENOMINATOR = 1000n;
const REPLACEMENT_MIN_NUMERATOR = 1100n;
// When the provider names no fee at all (a pre-London RPC): twice a 1 gwei gas price, a 0.001 gwei tip.
const FALLBACK_GAS_PRICE = 1_000_000_000n;
const FALLBACK_TIP = 1_000_000n;

/** The provider's fees for a fresh transaction, never above `cap`. */
export function freshFees(fees: FeeData, cap: bigint): Fees {
  const maxFeePerGas = min(fees.maxFeePerGas ?? (fees.gasPrice ?? FALLBACK_GAS_PRICE) * 2n, cap);
  return { maxFeePerGas, maxPriorityFeePerGas: min(fees.maxPriorityFeePerGas ?? FALLBACK_TIP, maxFeePerGas) };
}

/**
 * The fees to sign a pending transaction again with: both fields raised by 12.5% or to the provider's
 * current fees, whichever is higher, up to `cap`. With `baseFee` (the pending block's), the fee cap also
 * reaches twice that base fee plus the tip, the headroom ethers gives a fresh transaction, so one more
 * rise does not refuse it again. `undefined` when the cap holds the rise below what pools accept as a
 * replacement: sending it would only be refused.
 */
export function bumpedFees(
  previous: { maxFeePerGas: bigint | null; maxPriorityFeePerGas: bigint | null },
  current: Fees,
  cap: bigint,
  baseFee = 0n,
): Fees | undefined {
  const raise = (old: bigint | null, now: bigint) => min(max(now, ((old ?? 0n) * BUMP_NUMERATOR) / BUMP_DENOMINATOR + 1n), cap);
  const tip = raise(previous.maxPriorityFeePerGas, current.maxPriorityFeePerGas);
  const maxFeePerGas = min(max(raise(previous.maxFeePerGas, current.maxFeePerGas), baseFee * 2n + tip), cap);
  if (maxFeePerGas * BUMP_DENOMINATOR < (previous.maxFeePerGas ?? 0n) * REPLACEMENT_MIN_NUMERATOR) return undefined;
  return { maxFeePerGas, maxPriorityFeePerGas: min(tip, maxFeePerGas) };
}

function min(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}

function max(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}

import type { Address } from "viem";

import { INTENT_DEFAULT_FEE_BPS, type NetworkConfig } from "@avn/protocol/network-config";
import { NATIVE_TOKEN, type OrderStatusName } from "@avn/protocol/intents";

/**
 * The fast withdrawal's fill deadline, in seconds after the L2's latest block: ten minutes, as the SDK's `openOrder`
 * and the bridge CLI give. Long enough for a solver to see the order and get its L1 fill mined; short enough that an
 * order nobody fills is refundable soon after (deadline + the settler's `SETTLEMENT_WINDOW`).
 */
export const FAST_FILL_PERIOD_SECONDS = 600;

/**
 * A fast withdrawal's fill deadline: `FAST_FILL_PERIOD_SECONDS` after the later of the two chains' latest block times,
 * at most the settler's `MAX_FILL_PERIOD` after the L2's (which `open` checks it against). The fill is made on L1 and
 * checked against L1's clock (`DestinationSettler` refuses a fill after the deadline), the refund against the L2's:
 * the two agree within seconds on a live network, but a devnet's L1 time is moved on its own (its withdrawals' challenge
 * period), and a deadline taken from the L2 alone could then have passed on L1 before the order was even opened.
 */
export function fastFillDeadline({ l1Time, l2Time, maxFillPeriod }: { l1Time: bigint; l2Time: bigint; maxFillPeriod: bigint }): number {
  const later = l1Time > l2Time ? l1Time : l2Time;
  const wanted = later + BigInt(FAST_FILL_PERIOD_SECONDS);
  const latestAllowed = l2Time + maxFillPeriod;
  return Number(wanted < latestAllowed ? wanted : latestAllowed);
}

/** A solver usually fills within 1 to 3 L1 blocks of seeing the order (docs/intents.md). */
export const FAST_FILL_BLOCKS = { min: 1, max: 3 } as const;

/** The intent layer as the settings describe it: both settlers and the fee a solver fills for. */
export interface IntentSettings {
  originSettler: Address;
  destinationSettler: Address;
  /** The fee offered, in basis points of the input. */
  feeBps: number;
  /** Whether the fee is the deployment's solver's (`intents.minFeeBps`) or the reference solver's default. */
  feeFromSettings: boolean;
}

/** The intent layer's settings, or undefined when the deployment names no settlers (the page then says so). */
export function intentSettings(config: NetworkConfig): IntentSettings | undefined {
  const originSettler = config.contracts.l2.OriginSettler;
  const destinationSettler = config.contracts.l1.DestinationSettler;
  if (originSettler === undefined || destinationSettler === undefined) return undefined;
  const configured = config.intents?.minFeeBps;
  return { originSettler, destinationSettler, feeBps: configured ?? INTENT_DEFAULT_FEE_BPS, feeFromSettings: configured !== undefined };
}

/** What a fast withdrawal of `input` asks: the output paid on L1 (`input × (10,000 − feeBps) / 10,000`, rounded down) and the fee. */
export function fastQuote(input: bigint, feeBps: number): { output: bigint; fee: bigint } {
  const output = (input * BigInt(10_000 - feeBps)) / 10_000n;
  return { output, fee: input - output };
}

/** The L1 token a fast withdrawal of `asset` pays out, and the L2 token it escrows (`NATIVE_TOKEN` for ETH). */
export function orderTokens(asset: "eth" | "token", config: NetworkConfig): { input: Address; output: Address } {
  return asset === "eth"
    ? { input: NATIVE_TOKEN, output: NATIVE_TOKEN }
    : { input: config.contracts.l2.PrimaryToken, output: config.contracts.l1.PrimaryToken };
}

/** A token of an order by name: ETH, the primary token on its chain, or its address. */
export function orderAssetName(token: Address, chain: "l1" | "l2", config: NetworkConfig): string {
  if (token.toLowerCase() === NATIVE_TOKEN) return "ETH";
  if (token.toLowerCase() === config.contracts[chain].PrimaryToken.toLowerCase()) return "Primary token";
  return `Token ${token}`;
}

const STATUS_NAMES: readonly OrderStatusName[] = ["unknown", "open", "settled", "refunded"];

/** `orderStatus(id)`'s number as its name (`OrderStatus`); an unknown number reads as "unknown". */
export function orderStatusName(code: number): OrderStatusName {
  return STATUS_NAMES[code] ?? "unknown";
}

/** What the chains say of an order at one look: its status on the L2, its fill on L1, and the L2's time. */
export interface OrderReading {
  status: OrderStatusName;
  /** The L1 fill's time (`DestinationSettler.fills(id).filledAt`), when filled. */
  filledAt?: bigint;
  /** The L2's latest block time, which `refund` is checked against. */
  l2Time: bigint;
}

/** Where an order stands, for the Bridge page and the explorer. */
export type OrderPhase =
  | { phase: "unknown" }
  | { phase: "waiting-for-fill"; secondsToDeadline?: number }
  | { phase: "filled" }
  | { phase: "settled" }
  | { phase: "expired"; secondsToRefund: number }
  | { phase: "refundable" }
  | { phase: "filled-late" }
  | { phase: "refunded" };

/**
 * An order's phase from a reading, as the settler decides: settled and refunded are final; an open order filled on
 * L1 is settling; an open one unfilled is waiting until its fill deadline, then expired until the deadline plus the
 * settlement window has passed by the L2's clock (`refund` needs `block.timestamp > fillDeadline + window`), then
 * refundable. One filled whose settlement has not come by then is "filled-late": the contract would refund it too,
 * but the recipient was paid on L1, so the page offers no refund. Without the deadline (an explorer page that only
 * knows the order's id), an open order is only waiting or filled.
 */
export function orderPhase(reading: OrderReading, timing?: { fillDeadline: number; settlementWindow: bigint }): OrderPhase {
  if (reading.status === "settled") return { phase: "settled" };
  if (reading.status === "refunded") return { phase: "refunded" };
  if (reading.status === "unknown") return { phase: "unknown" };
  const refundableAfter = timing === undefined ? undefined : BigInt(timing.fillDeadline) + timing.settlementWindow;
  const pastWindow = refundableAfter !== undefined && reading.l2Time > refundableAfter;
  if (reading.filledAt !== undefined) return pastWindow ? { phase: "filled-late" } : { phase: "filled" };
  if (timing === undefined) return { phase: "waiting-for-fill" };
  if (reading.l2Time <= BigInt(timing.fillDeadline))
    return { phase: "waiting-for-fill", secondsToDeadline: Number(BigInt(timing.fillDeadline) - reading.l2Time) };
  if (!pastWindow) return { phase: "expired", secondsToRefund: Number(refundableAfter! - reading.l2Time + 1n) };
  return { phase: "refundable" };
}

/** Whether a phase can change no more: its reads stop. */
export function isFinalPhase(phase: OrderPhase): boolean {
  return phase.phase === "settled" || phase.phase === "refunded";
}

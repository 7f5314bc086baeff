import type { Address } from "viem";

import { INTENT_DEFAULT_FEE_BPS, type NetworkConfig } from "@avn/protocol/network-config";
import { NATIVE_TOKEN, type OrderStatusName } from "@avn/protocol/intents";

/**
 * A fast order's fill deadline, in seconds after its origin chain's latest block: ten minutes, as the SDK's
 * `openOrder` and the bridge CLI give. Long enough for a solver to see the order and get its fill mined; short enough
 * that an order nobody fills is refundable soon after (deadline + the settler's `SETTLEMENT_WINDOW`).
 */
export const FAST_FILL_PERIOD_SECONDS = 600;

/**
 * A fast order's fill deadline: `FAST_FILL_PERIOD_SECONDS` after the later of the two chains' latest block times, at
 * most the settler's `MAX_FILL_PERIOD` after the origin's (which `open` checks it against). The fill is made on the
 * destination chain and checked against its clock (the destination settler refuses a fill after the deadline), the
 * refund against the origin's: the two agree within seconds on a live network, but a devnet's L1 time is moved on its
 * own (its withdrawals' challenge period), and a deadline taken from the origin alone could then have passed on the
 * destination before the order was even opened.
 */
export function fastFillDeadline({
  destinationTime,
  originTime,
  maxFillPeriod,
}: {
  destinationTime: bigint;
  originTime: bigint;
  maxFillPeriod: bigint;
}): number {
  const later = destinationTime > originTime ? destinationTime : originTime;
  const wanted = later + BigInt(FAST_FILL_PERIOD_SECONDS);
  const latestAllowed = originTime + maxFillPeriod;
  return Number(wanted < latestAllowed ? wanted : latestAllowed);
}

/** A solver usually fills within 1 to 3 blocks of the destination chain of seeing the order (docs/intents.md). */
export const FAST_FILL_BLOCKS = { min: 1, max: 3 } as const;

/** The chains as the Bridge page names them: as a label ("L2") and in a sentence ("on the L2"). */
export const CHAIN_LABELS = { l1: "L1", l2: "L2" } as const;
export const CHAIN_WORDS = { l1: "L1", l2: "the L2" } as const;

/** Which way a fast order goes: a withdrawal is opened on the L2 and paid on L1, a deposit the other way. */
export type FastDirection = "withdraw" | "deposit";

/** The intent layer as the settings describe it, for one direction: its settlers and the fee a solver fills for. */
export interface IntentSettings {
  direction: FastDirection;
  /** The chain the order is opened (and refunded) on, and the one it is paid on. */
  origin: "l1" | "l2";
  destination: "l1" | "l2";
  originSettler: Address;
  destinationSettler: Address;
  /** The fee offered, in basis points of the input. */
  feeBps: number;
  /** Whether the fee is the deployment's solver's (`intents.minFeeBps`) or the reference solver's default. */
  feeFromSettings: boolean;
}

/**
 * The intent layer's settings for `direction` (fast withdrawals by default), or undefined when the deployment names no
 * settlers for it (the page then says so).
 */
export function intentSettings(config: NetworkConfig, direction: FastDirection = "withdraw"): IntentSettings | undefined {
  const [origin, destination] = direction === "withdraw" ? (["l2", "l1"] as const) : (["l1", "l2"] as const);
  const originSettler = config.contracts[origin].OriginSettler;
  const destinationSettler = config.contracts[destination].DestinationSettler;
  if (originSettler === undefined || destinationSettler === undefined) return undefined;
  const configured = config.intents?.minFeeBps;
  return {
    direction,
    origin,
    destination,
    originSettler,
    destinationSettler,
    feeBps: configured ?? INTENT_DEFAULT_FEE_BPS,
    feeFromSettings: configured !== undefined,
  };
}

/** What a fast order of `input` asks: the output paid on the destination (`input × (10,000 − feeBps) / 10,000`, rounded down) and the fee. */
export function fastQuote(input: bigint, feeBps: number): { output: bigint; fee: bigint } {
  const output = (input * BigInt(10_000 - feeBps)) / 10_000n;
  return { output, fee: input - output };
}

/** The token a fast order of `asset` escrows on its origin chain, and the one it pays out on its destination (`NATIVE_TOKEN` for ETH). */
export function orderTokens(
  asset: "eth" | "token",
  config: NetworkConfig,
  direction: FastDirection = "withdraw",
): { input: Address; output: Address } {
  if (asset === "eth") return { input: NATIVE_TOKEN, output: NATIVE_TOKEN };
  const { l1, l2 } = config.contracts;
  return direction === "withdraw"
    ? { input: l2.PrimaryToken, output: l1.PrimaryToken }
    : { input: l1.PrimaryToken, output: l2.PrimaryToken };
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

/** What the chains say of an order at one look: its status on its origin chain, its fill on the destination, and the origin's time. */
export interface OrderReading {
  status: OrderStatusName;
  /** The fill's time (`DestinationSettler.fills(id).filledAt`), when filled. */
  filledAt?: bigint;
  /** The origin chain's latest block time, which `refund` is checked against. */
  originTime: bigint;
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
 * its destination is settling; an open one unfilled is waiting until its fill deadline, then expired until the
 * deadline plus the settlement window has passed by the origin's clock (`refund` needs `block.timestamp > fillDeadline
 * + window`), then refundable. One filled whose settlement has not come by then is "filled-late": the contract would
 * refund it too, but the recipient was paid, so the page offers no refund. Without the deadline (an explorer page that only
 * knows the order's id), an open order is only waiting or filled.
 */
export function orderPhase(reading: OrderReading, timing?: { fillDeadline: number; settlementWindow: bigint }): OrderPhase {
  if (reading.status === "settled") return { phase: "settled" };
  if (reading.status === "refunded") return { phase: "refunded" };
  if (reading.status === "unknown") return { phase: "unknown" };
  const refundableAfter = timing === undefined ? undefined : BigInt(timing.fillDeadline) + timing.settlementWindow;
  const pastWindow = refundableAfter !== undefined && reading.originTime > refundableAfter;
  if (reading.filledAt !== undefined) return pastWindow ? { phase: "filled-late" } : { phase: "filled" };
  if (timing === undefined) return { phase: "waiting-for-fill" };
  if (reading.originTime <= BigInt(timing.fillDeadline))
    return { phase: "waiting-for-fill", secondsToDeadline: Number(BigInt(timing.fillDeadline) - reading.originTime) };
  if (!pastWindow) return { phase: "expired", secondsToRefund: Number(refundableAfter! - reading.originTime + 1n) };
  return { phase: "refundable" };
}

/** Whether a phase can change no more: its reads stop. */
export function isFinalPhase(phase: OrderPhase): boolean {
  return phase.phase === "settled" || phase.phase === "refunded";
}

import { decodeAbiParameters, decodeFunctionData, isAddressEqual, parseEventLogs, size, type Address, type Hex, type Log } from "viem";

import { decodeOrderData, decodeOriginData, orderIdOf, type OrderTerms } from "@avn/protocol/intents";
import { destinationSettlerAbi, l1OriginSettlerAbi, originSettlerAbi } from "../generated/intent-abis";

/**
 * What a transaction did to an intent order: opened it, filled it, settled it to its filler or refunded it (on the
 * order's origin chain, but the fill, on its destination: L2 and L1 for a fast withdrawal, the other way for a deposit).
 */
export type IntentStep = "open" | "fill" | "settle" | "refund";

/** An order's terms as the explorer shows them: what it escrows, what it pays and to whom, by when. */
export type IntentOrder = OrderTerms & { fillDeadline: number; user?: Address };

/** One intent order a transaction touched, read from its settler call and events. */
export interface IntentSummary {
  step: IntentStep;
  /**
   * The order's id. Unknown for an `open` call without its `Open` event (failed or pending): the settler assigns the
   * nonce that the id hashes when the transaction is mined.
   */
  orderId?: Hex;
  /** The order's terms, from its origin data (`Open`, `fill`, `settle`, `refund`) or, for an `open` call alone, its order data. */
  order?: IntentOrder;
  /** `Filled` and `Settled`: who filled it on L1 (`Filled`) or was paid the escrow (`Settled`). */
  filler?: Address;
  /** `Filled`, or the `fill` call's filler data: who is repaid the escrow on the L2. */
  repayTo?: Address;
  /** `Settled`: the L1 block whose state proved the fill (a fast deposit's `SettledByMessage` has none: its report was relayed). */
  l1BlockNumber?: bigint;
  /** `Refunded`: who got the escrow back. */
  refundedTo?: Address;
  /** Read from the call alone: the receipt has no event of this step (a failed or pending transaction). */
  callOnly: boolean;
}

const SETTLER_ABI = [...originSettlerAbi, ...destinationSettlerAbi, ...l1OriginSettlerAbi];
const EVENT_STEPS = { Open: "open", Filled: "fill", Settled: "settle", SettledByMessage: "settle", Refunded: "refund" } as const;

/** Decoded origin data, or undefined when the bytes are not this settlement system's (another ERC-7683 settler's). */
function originOrder(originData: Hex | undefined): IntentOrder | undefined {
  if (originData === undefined) return undefined;
  try {
    return decodeOriginData(originData);
  } catch {
    return undefined;
  }
}

/** What the call to a settler says, if the transaction is one: the step, the order's id and terms as far as its input has them. */
function fromCall(tx: { from: Address; to: Address | null; input: Hex }, settlers: { origin?: Address; destination?: Address }) {
  const to = tx.to;
  if (to === null) return undefined;
  try {
    if (settlers.origin !== undefined && isAddressEqual(to, settlers.origin)) {
      const call = decodeFunctionData({ abi: originSettlerAbi, data: tx.input });
      if (call.functionName === "open") {
        const [order] = call.args;
        const terms = (() => {
          try {
            return decodeOrderData(order.orderData);
          } catch {
            return undefined;
          }
        })();
        const summary: Omit<IntentSummary, "callOnly"> = {
          step: "open",
          order: terms === undefined ? undefined : { ...terms, fillDeadline: order.fillDeadline, user: tx.from },
        };
        return summary;
      }
      if (call.functionName === "settle" || call.functionName === "refund") {
        const originData = call.args[0];
        const summary: Omit<IntentSummary, "callOnly"> = {
          step: call.functionName,
          orderId: orderIdOf(originData),
          order: originOrder(originData),
        };
        return summary;
      }
      return undefined;
    }
    if (settlers.destination !== undefined && isAddressEqual(to, settlers.destination)) {
      const call = decodeFunctionData({ abi: destinationSettlerAbi, data: tx.input });
      if (call.functionName !== "fill") return undefined;
      const [orderId, originData, fillerData] = call.args;
      // Empty filler data repays the sender; else it is `abi.encode(address repayTo)`.
      const repayTo = size(fillerData) === 32 ? decodeAbiParameters([{ type: "address" }], fillerData)[0] : tx.from;
      const summary: Omit<IntentSummary, "callOnly"> = { step: "fill", orderId, order: originOrder(originData), repayTo };
      return summary;
    }
  } catch {
    // Not a call the settler's ABI knows (a view, or malformed input): nothing to add.
  }
  return undefined;
}

/**
 * The intent orders a transaction touched, one entry per step and order: from the settlers' events in its receipt
 * (`Open`, `Filled`, `Settled` or `SettledByMessage`, `Refunded`, only those the deployment's settlers on the
 * transaction's chain emitted: `settlers` are that chain's origin and destination settlers), completed with what its
 * call to a settler carries (a `Filled` event has no terms; the `fill` call's origin data has them). A call whose
 * event is missing (the transaction failed or is pending) is still described, marked `callOnly`.
 */
export function intentSummaries(
  tx: { from: Address; to: Address | null; input: Hex },
  logs: readonly Log[] | undefined,
  settlers: { origin?: Address; destination?: Address },
): IntentSummary[] {
  const mine = (logs ?? []).filter((log) =>
    [settlers.origin, settlers.destination].some((settler) => settler !== undefined && isAddressEqual(log.address, settler)),
  );
  const summaries: IntentSummary[] = [];
  for (const log of parseEventLogs({
    abi: SETTLER_ABI,
    logs: mine,
    eventName: ["Open", "Filled", "Settled", "SettledByMessage", "Refunded"],
  })) {
    // An origin settler's event from the destination's address (or the reverse) is not this system's.
    const fromOrigin = settlers.origin !== undefined && isAddressEqual(log.address, settlers.origin);
    if (fromOrigin === (log.eventName === "Filled")) continue;
    const base = { step: EVENT_STEPS[log.eventName], orderId: log.args.orderId, callOnly: false };
    switch (log.eventName) {
      case "Open":
        summaries.push({ ...base, order: originOrder(log.args.resolvedOrder.fillInstructions[0]?.originData) });
        break;
      case "Filled":
        summaries.push({ ...base, filler: log.args.filler, repayTo: log.args.repayTo });
        break;
      case "Settled":
        summaries.push({ ...base, filler: log.args.filler, l1BlockNumber: log.args.l1BlockNumber });
        break;
      case "SettledByMessage":
        summaries.push({ ...base, filler: log.args.filler });
        break;
      case "Refunded":
        summaries.push({ ...base, refundedTo: log.args.user });
        break;
    }
  }
  const call = fromCall(tx, settlers);
  if (call !== undefined) {
    const same = summaries.find(
      (summary) => summary.step === call.step && (call.orderId === undefined || summary.orderId === call.orderId),
    );
    if (same === undefined) summaries.push({ ...call, callOnly: true });
    else same.order ??= call.order;
  }
  return summaries;
}

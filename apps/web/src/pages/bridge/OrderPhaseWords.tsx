import { HexLink } from "../../components/ExplorerLink";
import { formatDuration } from "../../lib/format";
import { CHAIN_WORDS, type IntentSettings, type OrderPhase } from "../../lib/intents";
import type { ClosingEvent, FillEvent } from "./intent-status";

/** An order's phase in words, with the transactions that moved it (the fill on its destination, the closing on its origin). */
export function OrderPhaseWords({
  intents,
  phase,
  fill,
  closing,
}: {
  intents: Pick<IntentSettings, "origin" | "destination">;
  phase: OrderPhase;
  fill: FillEvent | undefined;
  closing: ClosingEvent | undefined;
}) {
  const [paidOn, settledOn] = [CHAIN_WORDS[intents.destination], CHAIN_WORDS[intents.origin]];
  const fillLink =
    fill === undefined ? null : (
      <>
        {" "}
        (tx <HexLink chain={intents.destination} kind="tx" value={fill.hash} />)
      </>
    );
  const closingLink =
    closing === undefined ? null : (
      <>
        {" "}
        (tx <HexLink chain={intents.origin} kind="tx" value={closing.hash} />)
      </>
    );
  switch (phase.phase) {
    case "unknown":
      return <>Unknown to the settler</>;
    case "waiting-for-fill":
      return (
        <>
          Opened: waiting for a solver to fill it on {paidOn}
          {phase.secondsToDeadline !== undefined && ` (deadline in ${formatDuration(phase.secondsToDeadline)})`}
        </>
      );
    case "filled":
      return (
        <>
          Filled on {paidOn}
          {fillLink}: settling on {settledOn}
        </>
      );
    case "settled":
      return (
        <>
          Settled: paid on {paidOn}
          {fillLink}, settled on {settledOn}
          {closingLink}
        </>
      );
    case "expired":
      return <>Not filled by its deadline: refundable in {formatDuration(phase.secondsToRefund)}</>;
    case "refundable":
      return <>Not filled by its deadline: refundable</>;
    case "filled-late":
      return (
        <>
          Filled on {paidOn}
          {fillLink}; its settlement on {settledOn} is late
        </>
      );
    case "refunded":
      return (
        <>
          Refunded on {settledOn}
          {closingLink}
        </>
      );
  }
}

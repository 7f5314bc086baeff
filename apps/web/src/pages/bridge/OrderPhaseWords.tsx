import { HexLink } from "../../components/ExplorerLink";
import { formatDuration } from "../../lib/format";
import type { OrderPhase } from "../../lib/intents";
import type { ClosingEvent, FillEvent } from "./intent-status";

/** An order's phase in words, with the transactions that moved it. */
export function OrderPhaseWords({
  phase,
  fill,
  closing,
}: {
  phase: OrderPhase;
  fill: FillEvent | undefined;
  closing: ClosingEvent | undefined;
}) {
  const fillLink =
    fill === undefined ? null : (
      <>
        {" "}
        (tx <HexLink chain="l1" kind="tx" value={fill.hash} />)
      </>
    );
  const closingLink =
    closing === undefined ? null : (
      <>
        {" "}
        (tx <HexLink chain="l2" kind="tx" value={closing.hash} />)
      </>
    );
  switch (phase.phase) {
    case "unknown":
      return <>Unknown to the settler</>;
    case "waiting-for-fill":
      return (
        <>
          Opened: waiting for a solver to fill it on L1
          {phase.secondsToDeadline !== undefined && ` (deadline in ${formatDuration(phase.secondsToDeadline)})`}
        </>
      );
    case "filled":
      return <>Filled on L1{fillLink}: settling on the L2</>;
    case "settled":
      return (
        <>
          Settled: paid on L1{fillLink}, settled on the L2{closingLink}
        </>
      );
    case "expired":
      return <>Not filled by its deadline: refundable in {formatDuration(phase.secondsToRefund)}</>;
    case "refundable":
      return <>Not filled by its deadline: refundable</>;
    case "filled-late":
      return <>Filled on L1{fillLink}; its settlement on the L2 is late</>;
    case "refunded":
      return <>Refunded on the L2{closingLink}</>;
  }
}

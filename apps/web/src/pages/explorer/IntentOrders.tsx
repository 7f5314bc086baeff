import { Link } from "react-router";
import type { Hex, Log, Transaction } from "viem";

import { useAppSettings } from "../../app-context";
import { explorerPaths } from "../../components/ExplorerLink";
import type { ChainKey } from "../../explorer/abis";
import { intentSummaries, type IntentStep, type IntentSummary } from "../../explorer/intents";
import { formatAmount, formatTime } from "../../lib/format";
import { intentSettings, orderAssetName, type IntentSettings } from "../../lib/intents";
import { useOrderProgress } from "../bridge/intent-status";
import { OrderPhaseWords } from "../bridge/OrderPhaseWords";
import { Addr, Fact } from "./parts";

const STEP_WORDS: Record<IntentStep, string> = {
  open: "Opened on the L2: the input escrowed in the origin settler",
  fill: "Filled on L1: the output paid to the recipient",
  settle: "Settled on the L2: the escrow paid to the filler, on a proof of its fill",
  refund: "Refunded on the L2: the escrow paid back to the user",
};

/**
 * The intent orders (ERC-7683 fast withdrawals) a transaction opened, filled, settled or refunded, in the
 * protocol's words: the order's id, what it escrows and pays to whom by when, the filler and whom it is repaid, and
 * where the order stands now. Read from the settlers' events and the call's input (`explorer/intents.ts`).
 */
export function IntentOrders({ chain, tx, logs }: { chain: ChainKey; tx: Transaction; logs: readonly Log[] | undefined }) {
  const { config } = useAppSettings();
  // Each settler on its own chain: an address on the other chain may be anything.
  const summaries = intentSummaries(
    tx,
    logs,
    chain === "l2" ? { origin: config.contracts.l2.OriginSettler } : { destination: config.contracts.l1.DestinationSettler },
  );
  if (summaries.length === 0) return null;
  const intents = intentSettings(config);
  return (
    <section aria-labelledby="intent-heading">
      <h2 id="intent-heading">Intent {summaries.length === 1 ? "order" : "orders"}</h2>
      <p className="hint">
        A fast withdrawal (ERC-7683): the user&apos;s input is escrowed on the L2, a solver pays the output on L1 and is repaid the escrow
        on the L2 once a proof of its payment reaches it. The <Link to="/bridge">Bridge</Link> page opens and follows the connected
        wallet&apos;s.
      </p>
      <ul>
        {summaries.map((summary, index) => (
          <li key={`${summary.step}-${summary.orderId ?? index}`} data-testid="intent-order" data-step={summary.step}>
            <IntentOrderFacts summary={summary} intents={intents} />
          </li>
        ))}
      </ul>
    </section>
  );
}

function IntentOrderFacts({ summary, intents }: { summary: IntentSummary; intents: IntentSettings | undefined }) {
  const { config } = useAppSettings();
  const { order } = summary;
  return (
    <dl className="facts">
      <Fact term="Step" testId="intent-step">
        {STEP_WORDS[summary.step]}
        {summary.callOnly && " (from the call: the transaction has no event of it)"}
      </Fact>
      <Fact term="Order id" testId="intent-order-id">
        {summary.orderId === undefined ? "assigned when the order is mined" : <code>{summary.orderId}</code>}
      </Fact>
      {order !== undefined && (
        <>
          <Fact term="Input (L2)" testId="intent-input">
            {formatAmount(order.inputAmount, 18, 18)} {orderAssetName(order.inputToken, "l2", config)}
          </Fact>
          <Fact term="Output (L1)" testId="intent-output">
            {formatAmount(order.outputAmount, 18, 18)} {orderAssetName(order.outputToken, "l1", config)}
          </Fact>
          <Fact term="Recipient (L1)" testId="intent-recipient">
            <Addr chain="l1" address={order.recipient} />
          </Fact>
          {order.user !== undefined && (
            <Fact term="User (L2)">
              <Addr chain="l2" address={order.user} />
            </Fact>
          )}
          <Fact term="Fill deadline" testId="intent-deadline">
            {formatTime(order.fillDeadline)}
          </Fact>
        </>
      )}
      {summary.filler !== undefined && (
        <Fact term={summary.step === "settle" ? "Paid to (L2)" : "Filler (L1)"} testId="intent-filler">
          <Addr chain={summary.step === "settle" ? "l2" : "l1"} address={summary.filler} />
        </Fact>
      )}
      {summary.repayTo !== undefined && (
        <Fact term="Repaid to (L2)" testId="intent-repay-to">
          <Addr chain="l2" address={summary.repayTo} />
        </Fact>
      )}
      {summary.l1BlockNumber !== undefined && (
        <Fact term="Fill proven at">
          L1 block <Link to={explorerPaths.block("l1", summary.l1BlockNumber)}>{summary.l1BlockNumber.toString()}</Link>
        </Fact>
      )}
      {summary.refundedTo !== undefined && (
        <Fact term="Refunded to (L2)">
          <Addr chain="l2" address={summary.refundedTo} />
        </Fact>
      )}
      {intents !== undefined && summary.orderId !== undefined && (
        <Fact term="Now" testId="intent-now">
          <OrderNow intents={intents} orderId={summary.orderId} fillDeadline={order?.fillDeadline} />
        </Fact>
      )}
    </dl>
  );
}

function OrderNow({ intents, orderId, fillDeadline }: { intents: IntentSettings; orderId: Hex; fillDeadline: number | undefined }) {
  const { reading, phase, fill, closing } = useOrderProgress(intents, orderId, fillDeadline);
  if (phase === undefined) return <>{reading.isError ? "could not read the order" : "checking…"}</>;
  return <OrderPhaseWords intents={intents} phase={phase} fill={fill} closing={closing} />;
}

import { Link } from "react-router";
import type { Hex, Log, Transaction } from "viem";

import { useAppSettings } from "../../app-context";
import { explorerPaths } from "../../components/ExplorerLink";
import type { ChainKey } from "../../explorer/abis";
import { intentSummaries, type IntentStep, type IntentSummary } from "../../explorer/intents";
import { formatAmount, formatTime } from "../../lib/format";
import { CHAIN_LABELS, CHAIN_WORDS, intentSettings, orderAssetName, type FastDirection, type IntentSettings } from "../../lib/intents";
import { useOrderProgress } from "../bridge/intent-status";
import { OrderPhaseWords } from "../bridge/OrderPhaseWords";
import { Addr, Fact } from "./parts";

/** An order's origin and destination chains. */
const chainsOf = (direction: FastDirection): { o: ChainKey; d: ChainKey } =>
  direction === "withdraw" ? { o: "l2", d: "l1" } : { o: "l1", d: "l2" };

/** A step in words, on the chain it happened on. */
function stepWords(step: IntentStep, direction: FastDirection): string {
  const { o, d } = chainsOf(direction);
  switch (step) {
    case "open":
      return `Opened on ${CHAIN_WORDS[o]}: the input escrowed in the origin settler`;
    case "fill":
      return `Filled on ${CHAIN_WORDS[d]}: the output paid to the recipient`;
    case "settle":
      return direction === "withdraw"
        ? "Settled on the L2: the escrow paid to the filler, on a proof of its fill"
        : "Settled on L1: the escrow paid to the filler, on its report relayed from the L2";
    case "refund":
      return `Refunded on ${CHAIN_WORDS[o]}: the escrow paid back to the user`;
  }
}

/**
 * Which way an order a transaction on `chain` touched goes: a fill is made on the destination chain, every other
 * step on the origin (a fast withdrawal's origin is the L2, a deposit's L1).
 */
function directionOf(chain: ChainKey, step: IntentStep): FastDirection {
  return (chain === "l2") === (step !== "fill") ? "withdraw" : "deposit";
}

/**
 * The intent orders (ERC-7683 fast withdrawals and deposits) a transaction opened, filled, settled or refunded, in the
 * protocol's words: the order's id, what it escrows and pays to whom by when, the filler and whom it is repaid, and
 * where the order stands now. Read from the settlers' events and the call's input (`explorer/intents.ts`).
 */
export function IntentOrders({ chain, tx, logs }: { chain: ChainKey; tx: Transaction; logs: readonly Log[] | undefined }) {
  const { config } = useAppSettings();
  // The settlers on this transaction's chain (an address on the other chain may be anything): on the L2 the origin of
  // fast withdrawals and the destination of deposits, on L1 the other way round.
  const summaries = intentSummaries(tx, logs, {
    origin: config.contracts[chain].OriginSettler,
    destination: config.contracts[chain].DestinationSettler,
  });
  if (summaries.length === 0) return null;
  return (
    <section aria-labelledby="intent-heading">
      <h2 id="intent-heading">Intent {summaries.length === 1 ? "order" : "orders"}</h2>
      <p className="hint">
        A fast withdrawal (ERC-7683): the user&apos;s input is escrowed on the L2, a solver pays the output on L1 and is repaid the escrow
        on the L2 once a proof of its payment reaches it. A fast deposit goes the other way, the solver repaid on L1 once its report is
        relayed. The <Link to="/bridge">Bridge</Link> page opens and follows the connected wallet&apos;s.
      </p>
      <ul>
        {summaries.map((summary, index) => (
          <li key={`${summary.step}-${summary.orderId ?? index}`} data-testid="intent-order" data-step={summary.step}>
            <IntentOrderFacts
              summary={summary}
              direction={directionOf(chain, summary.step)}
              intents={intentSettings(config, directionOf(chain, summary.step))}
            />
          </li>
        ))}
      </ul>
    </section>
  );
}

function IntentOrderFacts({
  summary,
  direction,
  intents,
}: {
  summary: IntentSummary;
  direction: FastDirection;
  intents: IntentSettings | undefined;
}) {
  const { config } = useAppSettings();
  const { order } = summary;
  const { o, d } = chainsOf(direction);
  return (
    <dl className="facts">
      <Fact term="Step" testId="intent-step">
        {stepWords(summary.step, direction)}
        {summary.callOnly && " (from the call: the transaction has no event of it)"}
      </Fact>
      <Fact term="Order id" testId="intent-order-id">
        {summary.orderId === undefined ? "assigned when the order is mined" : <code>{summary.orderId}</code>}
      </Fact>
      {order !== undefined && (
        <>
          <Fact term={`Input (${CHAIN_LABELS[o]})`} testId="intent-input">
            {formatAmount(order.inputAmount, 18, 18)} {orderAssetName(order.inputToken, o, config)}
          </Fact>
          <Fact term={`Output (${CHAIN_LABELS[d]})`} testId="intent-output">
            {formatAmount(order.outputAmount, 18, 18)} {orderAssetName(order.outputToken, d, config)}
          </Fact>
          <Fact term={`Recipient (${CHAIN_LABELS[d]})`} testId="intent-recipient">
            <Addr chain={d} address={order.recipient} />
          </Fact>
          {order.user !== undefined && (
            <Fact term={`User (${CHAIN_LABELS[o]})`}>
              <Addr chain={o} address={order.user} />
            </Fact>
          )}
          <Fact term="Fill deadline" testId="intent-deadline">
            {formatTime(order.fillDeadline)}
          </Fact>
        </>
      )}
      {summary.filler !== undefined && (
        <Fact term={summary.step === "settle" ? `Paid to (${CHAIN_LABELS[o]})` : `Filler (${CHAIN_LABELS[d]})`} testId="intent-filler">
          <Addr chain={summary.step === "settle" ? o : d} address={summary.filler} />
        </Fact>
      )}
      {summary.repayTo !== undefined && (
        <Fact term={`Repaid to (${CHAIN_LABELS[o]})`} testId="intent-repay-to">
          <Addr chain={o} address={summary.repayTo} />
        </Fact>
      )}
      {summary.l1BlockNumber !== undefined && (
        <Fact term="Fill proven at">
          L1 block <Link to={explorerPaths.block("l1", summary.l1BlockNumber)}>{summary.l1BlockNumber.toString()}</Link>
        </Fact>
      )}
      {summary.refundedTo !== undefined && (
        <Fact term={`Refunded to (${CHAIN_LABELS[o]})`}>
          <Addr chain={o} address={summary.refundedTo} />
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

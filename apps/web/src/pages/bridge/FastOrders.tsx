import { useQuery } from "@tanstack/react-query";
import { isAddressEqual, type Address, type Hash, type Hex } from "viem";
import { useConfig } from "wagmi";

import { decodeOriginData, type OriginData } from "@avn/protocol/intents";
import { useAppSettings } from "../../app-context";
import { DataTable, type Column } from "../../components/DataTable";
import { HexLink } from "../../components/ExplorerLink";
import { TxButton } from "../../components/TxButton";
import { originSettlerAbi } from "../../generated/intent-abis";
import { describeError } from "../../lib/errors";
import { formatAmount } from "../../lib/format";
import { CHAIN_LABELS, CHAIN_WORDS, orderAssetName, type IntentSettings } from "../../lib/intents";
import { intentClients, useOrderProgress } from "./intent-status";
import { OrderPhaseWords } from "./OrderPhaseWords";
import { writeChecked } from "./shared";

const LIST_REFRESH_MS = 15_000;

/** An order of the account's, as its `Open` event on the origin chain gives it. */
export interface FastOrder {
  orderId: Hex;
  /** Everything the order is: what a refund takes back. */
  originData: Hex;
  order: OriginData;
  openHash: Hash;
  openBlock: bigint;
  logIndex: number;
}

/** What each direction's list is called, and the test ids of its rows. */
const LIST_NAMES = {
  withdraw: { title: "Fast withdrawals", one: "fast withdrawal", testId: "fast-withdrawal" },
  deposit: { title: "Fast deposits", one: "fast deposit", testId: "fast-deposit" },
} as const;

/**
 * The connected account's fast orders of one direction, found from chain data alone: the origin settler's `Open`
 * events whose order names the account as its user (not an indexed argument: every order of the settler is read, then
 * kept or not), so a reload or another device shows the same list. Each row follows its order to its settlement.
 */
export function FastOrders({ account, intents }: { account: Address; intents: IntentSettings }) {
  const wagmiConfig = useConfig();
  const settings = useAppSettings();
  const { config, chains } = settings;
  const names = LIST_NAMES[intents.direction];
  const origin = chains[intents.origin];
  const list = useQuery({
    queryKey: ["bridge", "fast-orders", origin.id, intents.originSettler, account],
    refetchInterval: LIST_REFRESH_MS,
    queryFn: async (): Promise<FastOrder[]> => {
      const logs = await intentClients(wagmiConfig, settings)[intents.origin].getContractEvents({
        address: intents.originSettler,
        abi: originSettlerAbi,
        eventName: "Open",
        fromBlock: BigInt(config[intents.origin].fromBlock),
        toBlock: "latest",
        strict: true,
      });
      const orders: FastOrder[] = [];
      for (const log of logs) {
        if (!isAddressEqual(log.args.resolvedOrder.user, account)) continue;
        const originData = log.args.resolvedOrder.fillInstructions[0]?.originData;
        if (originData === undefined) continue;
        orders.push({
          orderId: log.args.orderId,
          originData,
          order: decodeOriginData(originData),
          openHash: log.transactionHash,
          openBlock: log.blockNumber,
          logIndex: log.logIndex,
        });
      }
      return orders.reverse(); // newest first
    },
  });

  const columns: Array<Column<FastOrder>> = [
    {
      header: `Opened on ${CHAIN_LABELS[intents.origin]}`,
      cell: (row) => (
        <>
          <HexLink chain={intents.origin} kind="tx" value={row.openHash} />
          <br />
          <span className="hint">block {row.openBlock.toString()}</span>
        </>
      ),
    },
    { header: "Asset", cell: (row) => orderAssetName(row.order.inputToken, intents.origin, config) },
    { header: "Amount", cell: (row) => formatAmount(row.order.inputAmount) },
    {
      header: `Paid on ${CHAIN_LABELS[intents.destination]}`,
      cell: (row) => (
        <>
          {formatAmount(row.order.outputAmount)}
          {!isAddressEqual(row.order.recipient, account) && (
            <>
              {" "}
              to <HexLink chain={intents.destination} kind="address" value={row.order.recipient} />
            </>
          )}
          <br />
          <span className="hint">fee {formatAmount(row.order.inputAmount - row.order.outputAmount)}</span>
        </>
      ),
    },
    {
      header: "Status",
      cell: (row) => <FastOrderStatus intents={intents} row={row} />,
      cellProps: () => ({ "data-testid": `${names.testId}-status`, "aria-live": "polite" }),
    },
    { header: "Next step", cell: (row) => <FastOrderAction intents={intents} row={row} /> },
  ];
  const headingId = `${names.testId}s-heading`;

  return (
    <section aria-labelledby={headingId}>
      <h2 id={headingId}>{names.title}</h2>
      <p className="hint">
        {intents.direction === "withdraw"
          ? "A fast withdrawal is an order on the L2 (ERC-7683): its amount is escrowed there, a solver pays the amount less its fee to you on L1 within a few L1 blocks, and is repaid the escrow on the L2 once a proof of its payment reaches it (settled)."
          : "A fast deposit is an order on L1 (ERC-7683): its amount is escrowed there, a solver pays the amount less its fee to you on the L2 at its next blocks, and is repaid the escrow on L1 once its report of the payment is relayed, after the challenge period (settled)."}{" "}
        An order nobody fills by its deadline can be refunded on {CHAIN_WORDS[intents.origin]} after the settlement window.
      </p>
      {list.isPending ? (
        <p role="status">Loading your {names.one}s…</p>
      ) : list.isError ? (
        <p className="error" role="alert">
          Could not load your {names.one}s: {describeError(list.error)}
        </p>
      ) : (
        <DataTable
          caption={`Your ${names.one}s`}
          columns={columns}
          rows={list.data}
          rowKey={(row) => row.orderId}
          rowProps={(row) => ({ "data-testid": names.testId, "data-order-id": row.orderId })}
          empty={`No ${names.one}s from this account yet.`}
        />
      )}
    </section>
  );
}

function FastOrderStatus({ intents, row }: { intents: IntentSettings; row: FastOrder }) {
  const { reading, phase, fill, closing } = useOrderProgress(intents, row.orderId, row.order.fillDeadline);
  // A failed refresh keeps the last phase known: only a phase never read is an error.
  if (phase === undefined) return <>{reading.isError ? `Could not read the order: ${describeError(reading.error)}` : "Checking…"}</>;
  return (
    <span data-phase={phase.phase}>
      <OrderPhaseWords intents={intents} phase={phase} fill={fill} closing={closing} />
    </span>
  );
}

function FastOrderAction({ intents, row }: { intents: IntentSettings; row: FastOrder }) {
  const wagmiConfig = useConfig();
  const { chains } = useAppSettings();
  const { phase, refresh } = useOrderProgress(intents, row.orderId, row.order.fillDeadline);
  const origin = chains[intents.origin];
  switch (phase?.phase) {
    case "refundable":
      return (
        <TxButton
          chainId={origin.id}
          onMined={refresh}
          send={() =>
            writeChecked(wagmiConfig, {
              address: intents.originSettler,
              abi: originSettlerAbi,
              functionName: "refund",
              args: [row.originData],
              chainId: origin.id,
              account: row.order.user,
            })
          }
        >
          Refund
        </TxButton>
      );
    case "settled":
      return <span>Done: paid on {CHAIN_WORDS[intents.destination]}.</span>;
    case "refunded":
      return <span>Back in your {CHAIN_LABELS[intents.origin]} balance.</span>;
    case "expired":
      return <span className="hint">Refund once the settlement window has passed.</span>;
    case "filled":
      return <span className="hint">Nothing to do: the solver settles it.</span>;
    default:
      return <span className="hint">Nothing to do yet.</span>;
  }
}

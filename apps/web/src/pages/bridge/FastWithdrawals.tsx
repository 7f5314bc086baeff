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
import { orderAssetName, type IntentSettings } from "../../lib/intents";
import { intentClients, useOrderProgress } from "./intent-status";
import { OrderPhaseWords } from "./OrderPhaseWords";
import { writeChecked } from "./shared";

const LIST_REFRESH_MS = 15_000;

/** An order of the account's, as its `Open` event gives it. */
export interface FastOrder {
  orderId: Hex;
  /** Everything the order is: what a refund takes back. */
  originData: Hex;
  order: OriginData;
  l2Hash: Hash;
  l2Block: bigint;
  logIndex: number;
}

/**
 * The connected account's fast withdrawals, found from chain data alone: the origin settler's `Open` events whose
 * order names the account as its user (not an indexed argument: every order of the settler is read, then kept or
 * not), so a reload or another device shows the same list. Each row follows its order to its settlement.
 */
export function FastWithdrawals({ account, intents }: { account: Address; intents: IntentSettings }) {
  const wagmiConfig = useConfig();
  const settings = useAppSettings();
  const { config, chains } = settings;
  const list = useQuery({
    queryKey: ["bridge", "fast-withdrawals", chains.l2.id, intents.originSettler, account],
    refetchInterval: LIST_REFRESH_MS,
    queryFn: async (): Promise<FastOrder[]> => {
      const logs = await intentClients(wagmiConfig, settings).l2.getContractEvents({
        address: intents.originSettler,
        abi: originSettlerAbi,
        eventName: "Open",
        fromBlock: BigInt(config.l2.fromBlock),
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
          l2Hash: log.transactionHash,
          l2Block: log.blockNumber,
          logIndex: log.logIndex,
        });
      }
      return orders.reverse(); // newest first
    },
  });

  const columns: Array<Column<FastOrder>> = [
    {
      header: "Opened on L2",
      cell: (row) => (
        <>
          <HexLink chain="l2" kind="tx" value={row.l2Hash} />
          <br />
          <span className="hint">block {row.l2Block.toString()}</span>
        </>
      ),
    },
    { header: "Asset", cell: (row) => orderAssetName(row.order.inputToken, "l2", config) },
    { header: "Amount", cell: (row) => formatAmount(row.order.inputAmount) },
    {
      header: "Paid on L1",
      cell: (row) => (
        <>
          {formatAmount(row.order.outputAmount)}
          {!isAddressEqual(row.order.recipient, account) && (
            <>
              {" "}
              to <HexLink chain="l1" kind="address" value={row.order.recipient} />
            </>
          )}
          <br />
          <span className="hint">fee {formatAmount(row.order.inputAmount - row.order.outputAmount)}</span>
        </>
      ),
    },
    {
      header: "Status",
      cell: (row) => <FastWithdrawalStatus intents={intents} row={row} />,
      cellProps: () => ({ "data-testid": "fast-withdrawal-status", "aria-live": "polite" }),
    },
    { header: "Next step", cell: (row) => <FastWithdrawalAction intents={intents} row={row} /> },
  ];

  return (
    <section aria-labelledby="fast-withdrawals-heading">
      <h2 id="fast-withdrawals-heading">Fast withdrawals</h2>
      <p className="hint">
        A fast withdrawal is an order on the L2 (ERC-7683): its amount is escrowed there, a solver pays the amount less its fee to you on L1
        within a few L1 blocks, and is repaid the escrow on the L2 once a proof of its payment reaches it (settled). An order nobody fills
        by its deadline can be refunded on the L2 after the settlement window.
      </p>
      {list.isPending ? (
        <p role="status">Loading your fast withdrawals…</p>
      ) : list.isError ? (
        <p className="error" role="alert">
          Could not load your fast withdrawals: {describeError(list.error)}
        </p>
      ) : (
        <DataTable
          caption="Your fast withdrawals"
          columns={columns}
          rows={list.data}
          rowKey={(row) => row.orderId}
          rowProps={(row) => ({ "data-testid": "fast-withdrawal", "data-order-id": row.orderId })}
          empty="No fast withdrawals from this account yet."
        />
      )}
    </section>
  );
}

function FastWithdrawalStatus({ intents, row }: { intents: IntentSettings; row: FastOrder }) {
  const { reading, phase, fill, closing } = useOrderProgress(intents, row.orderId, row.order.fillDeadline);
  // A failed refresh keeps the last phase known: only a phase never read is an error.
  if (phase === undefined) return <>{reading.isError ? `Could not read the order: ${describeError(reading.error)}` : "Checking…"}</>;
  return (
    <span data-phase={phase.phase}>
      <OrderPhaseWords phase={phase} fill={fill} closing={closing} />
    </span>
  );
}

function FastWithdrawalAction({ intents, row }: { intents: IntentSettings; row: FastOrder }) {
  const wagmiConfig = useConfig();
  const { chains } = useAppSettings();
  const { phase, refresh } = useOrderProgress(intents, row.orderId, row.order.fillDeadline);
  switch (phase?.phase) {
    case "refundable":
      return (
        <TxButton
          chainId={chains.l2.id}
          onMined={refresh}
          send={() =>
            writeChecked(wagmiConfig, {
              address: intents.originSettler,
              abi: originSettlerAbi,
              functionName: "refund",
              args: [row.originData],
              chainId: chains.l2.id,
              account: row.order.user,
            })
          }
        >
          Refund
        </TxButton>
      );
    case "settled":
      return <span>Done: paid on L1.</span>;
    case "refunded":
      return <span>Back in your L2 balance.</span>;
    case "expired":
      return <span className="hint">Refund once the settlement window has passed.</span>;
    case "filled":
      return <span className="hint">Nothing to do: the solver settles it.</span>;
    default:
      return <span className="hint">Nothing to do yet.</span>;
  }
}

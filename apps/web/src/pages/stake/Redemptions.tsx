import { useEffect, useState } from "react";
import { useBlock, useConfig, useConnection, useReadContracts } from "wagmi";

import { useAppSettings } from "../../app-context";
import { DataTable, type Column } from "../../components/DataTable";
import { TxButton } from "../../components/TxButton";
import { stakedTokenAbi } from "../../generated/abis";
import { describeError } from "../../lib/errors";
import { formatAmount, formatDuration, formatTime } from "../../lib/format";
import { simulateAndWrite } from "../../lib/transactions";

/** The most pending requests listed; the contract pages its id list, and a wallet rarely has more. */
const PAGE = 100n;

/** The wallet's pending redemptions, each with Complete (once unlocked) and Cancel. */
export function Redemptions() {
  const { config, chains } = useAppSettings();
  const { address: owner } = useConnection();
  const staked = { address: config.contracts.l2.StakedToken, abi: stakedTokenAbi, chainId: chains.l2.id } as const;
  // Said after a row's transaction is mined: the row itself disappears with the refreshed list.
  const [done, setDone] = useState("");

  const list = useReadContracts({
    contracts: [
      { ...staked, functionName: "pendingRedemptionCount", args: [owner!] },
      { ...staked, functionName: "pendingRedemptionIds", args: [owner!, 0n, PAGE] },
    ],
    allowFailure: false,
    query: { enabled: owner !== undefined },
  });
  const ids = [...(list.data?.[1] ?? [])].sort((a, b) => (a < b ? -1 : 1)); // the contract's order is unspecified
  const details = useReadContracts({
    contracts: ids.map((id) => ({ ...staked, functionName: "getRedemption", args: [id] }) as const),
    allowFailure: false,
    query: { enabled: ids.length > 0 },
  });

  let body;
  // Without a wallet there is no one to list for: the page says once what a wallet is for.
  if (owner === undefined) return null;
  if (list.error !== null || details.error !== null) body = <p className="error">{describeError(list.error ?? details.error)}</p>;
  else if (list.data === undefined || (ids.length > 0 && details.data === undefined)) body = <p role="status">Loading your redemptions…</p>;
  else if (ids.length === 0) body = <p>You have no pending redemptions.</p>;
  else
    body = (
      <>
        <RedemptionTable rows={ids.map((id, index) => ({ id, ...details.data![index] }))} onDone={setDone} />
        {list.data[0] > PAGE && (
          <p className="hint">
            Showing the first {PAGE.toString()} of {list.data[0].toString()} pending redemptions.
          </p>
        )}
      </>
    );

  return (
    <section aria-labelledby="redemptions-heading">
      <h2 id="redemptions-heading">Pending redemptions</h2>
      <p className="success" role="status">
        {done}
      </p>
      {body}
    </section>
  );
}

interface Row {
  id: bigint;
  stakedAmount: bigint;
  primaryAmount: bigint;
  unlockTime: bigint;
}

function RedemptionTable({ rows, onDone }: { rows: Row[]; onDone: (message: string) => void }) {
  const { config, chains } = useAppSettings();
  const wagmiConfig = useConfig();
  const now = useChainNow(chains.l2.id);
  const send = (functionName: "completeRedemption" | "cancelRedemption", id: bigint) => () =>
    simulateAndWrite(wagmiConfig, {
      address: config.contracts.l2.StakedToken,
      abi: stakedTokenAbi,
      chainId: chains.l2.id,
      functionName,
      args: [id],
    });

  const columns: Array<Column<Row & { left: number }>> = [
    { header: "Request", rowHeader: true, cell: (row) => `#${row.id.toString()}` },
    { header: "Staked", cell: (row) => formatAmount(row.stakedAmount) },
    { header: "Primary to receive", cell: (row) => formatAmount(row.primaryAmount) },
    { header: "Unlocks at", cell: (row) => formatTime(row.unlockTime) },
    // Not a live region: a screen reader announcing every second would drown everything else.
    { header: "Time left", cell: (row) => (row.left > 0 ? formatDuration(row.left) : "Unlocked") },
    {
      header: "Actions",
      cell: (row) => (
        <>
          <TxButton
            chainId={chains.l2.id}
            disabled={row.left > 0}
            disabledReason={`Locked for ${formatDuration(Math.max(row.left, 0))} more.`}
            send={send("completeRedemption", row.id)}
            onMined={() => onDone(`Redemption #${row.id} completed: ${formatAmount(row.primaryAmount)} primary tokens paid to you.`)}
          >
            Complete
          </TxButton>
          <TxButton
            chainId={chains.l2.id}
            variant="secondary"
            send={send("cancelRedemption", row.id)}
            onMined={() => onDone(`Redemption #${row.id} cancelled: ${formatAmount(row.stakedAmount)} staked tokens returned.`)}
          >
            Cancel
          </TxButton>
        </>
      ),
    },
  ];

  return (
    <DataTable
      caption="Your redemptions"
      columns={columns}
      rows={rows.map((row) => ({ ...row, left: Number(row.unlockTime) - now }))}
      rowKey={(row) => row.id.toString()}
      rowProps={(row) => ({ "data-testid": "redemption", "data-redemption-id": row.id.toString() })}
    />
  );
}

/**
 * The chain's time in seconds, ticking every second. Unlocking is judged by block timestamps, which can
 * run ahead of the wall clock on a devnet, so this is the latest block's timestamp plus the time since
 * it arrived, or the wall clock when that is later (a chain that mines only on demand has stale blocks).
 */
function useChainNow(chainId: number): number {
  const block = useBlock({ chainId, watch: true });
  const [wall, setWall] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setWall(Date.now()), 1_000);
    return () => clearInterval(timer);
  }, []);
  const wallSeconds = Math.floor(wall / 1_000);
  if (block.data === undefined) return wallSeconds;
  return Math.max(wallSeconds, Number(block.data.timestamp) + Math.max(0, Math.floor((wall - block.dataUpdatedAt) / 1_000)));
}

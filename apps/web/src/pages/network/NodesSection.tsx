import { keepPreviousData } from "@tanstack/react-query";
import { getAddress, zeroAddress, type Address, type PublicClient } from "viem";
import { useBlock, useReadContract, useReadContracts } from "wagmi";

import { HexLink } from "../../components/ExplorerLink";
import { useAppSettings } from "../../app-context";
import { DataTable, type Column } from "../../components/DataTable";
import { nodeLicenseAbi, nodeRegistryAbi } from "../../generated/abis";
import { describeError } from "../../lib/errors";
import { formatDuration, formatTime } from "../../lib/format";
import { QosSection } from "./QosSection";
import { Shown } from "./Shown";

/** Liveness follows heartbeats and the block clock, so the table re-reads every few seconds. */
const REFRESH = { refetchInterval: 3_000 } as const;

interface NodeRow {
  operator: Address;
  licenseIds: bigint[];
  live: boolean;
}

const licenseList = (ids: bigint[]) => ids.map((id) => `#${id}`).join(", ");

/**
 * Every minted license, grouped by the operator (node burner wallet) it is delegated to, with whether it is
 * live now; then each license's quality of service by epoch.
 */
export function NodesSection({ client, onShown }: { client: PublicClient; onShown: () => void }) {
  const { config, chains } = useAppSettings();
  const chainId = chains.l2.id;
  const registry = { address: config.contracts.l2.NodeRegistry, abi: nodeRegistryAbi, chainId } as const;

  const minted = useReadContract({
    address: config.contracts.l2.NodeLicense,
    abi: nodeLicenseAbi,
    chainId,
    functionName: "totalMinted",
    query: REFRESH,
  });
  // Ids are 1..totalMinted: NodeLicense mints consecutive ids from totalMinted + 1 and never burns.
  const ids = Array.from({ length: Number(minted.data ?? 0n) }, (_, index) => BigInt(index + 1));
  // Keeping the previous data while a newly minted license changes the query keeps the table from blinking.
  const perLicense = { allowFailure: false, query: { ...REFRESH, enabled: ids.length > 0, placeholderData: keepPreviousData } } as const;
  const operators = useReadContracts({
    ...perLicense,
    contracts: ids.map((id) => ({ ...registry, functionName: "operatorOf", args: [id] }) as const),
  });
  const live = useReadContracts({
    ...perLicense,
    contracts: ids.map((id) => ({ ...registry, functionName: "isLive", args: [id] }) as const),
  });

  // Group by operator; operatorOf is zero for a license never delegated, undelegated, or transferred since.
  const nodes = new Map<Address, NodeRow>();
  const undelegated: bigint[] = [];
  const ready = minted.data !== undefined && (ids.length === 0 || (operators.data !== undefined && live.data !== undefined));
  // While placeholder data is shown the two lists may be shorter than ids: use the licenses both cover.
  const known = Math.min(operators.data?.length ?? 0, live.data?.length ?? 0);
  if (ready) {
    ids.slice(0, known).forEach((id, index) => {
      const operator = operators.data![index];
      if (operator === zeroAddress) return void undelegated.push(id);
      const key = getAddress(operator);
      const node = nodes.get(key) ?? { operator: key, licenseIds: [], live: true };
      node.licenseIds.push(id);
      // One heartbeat covers all of an operator's licenses, so they are live together; "every" guards the edge.
      node.live &&= live.data![index] === true;
      nodes.set(key, node);
    });
  }
  const rows = [...nodes.values()];
  const heartbeats = useReadContracts({
    allowFailure: false,
    contracts: rows.map((node) => ({ ...registry, functionName: "heartbeatOf", args: [node.operator] }) as const),
    query: { ...REFRESH, enabled: rows.length > 0, placeholderData: keepPreviousData },
  });
  // Ages are measured against the chain's clock, not the browser's (a devnet's time can be moved).
  const block = useBlock({ chainId, query: REFRESH });
  const now = block.data?.timestamp;

  const columns: Array<Column<NodeRow & { heartbeat?: { timestamp: bigint } }>> = [
    { header: "Operator", cell: (node) => <HexLink chain="l2" kind="address" value={node.operator} full /> },
    { header: "Licenses", cell: (node) => licenseList(node.licenseIds) },
    { header: "Status", cell: (node) => <span className={`badge ${node.live ? "live" : "down"}`}>{node.live ? "Live" : "Not live"}</span> },
    {
      header: "Last heartbeat",
      cell: ({ heartbeat }) =>
        heartbeat === undefined ? (
          "…"
        ) : heartbeat.timestamp === 0n ? (
          "Never"
        ) : (
          <>
            <time dateTime={new Date(Number(heartbeat.timestamp) * 1000).toISOString()}>{formatTime(heartbeat.timestamp)}</time>
            {now !== undefined && (
              <span className="hint"> ({formatDuration(now > heartbeat.timestamp ? now - heartbeat.timestamp : 0n)} ago)</span>
            )}
          </>
        ),
    },
  ];

  const error = minted.error ?? operators.error ?? live.error;
  const liveCount = rows.filter((node) => node.live).length;
  // Until the nodes have been read, the section is its heading and one line; the table, the quality of
  // service and the sections below it (NetworkPage) come in one piece, so that nothing on screen moves down
  // as they arrive. An error is shown at once, and lets the page go on.
  const complete = ready && (rows.length === 0 || (heartbeats.data !== undefined && now !== undefined));
  const firstError = error ?? heartbeats.error ?? block.error;
  if (!complete)
    return (
      <section aria-labelledby="nodes-heading">
        <h2 id="nodes-heading">Nodes</h2>
        {firstError !== null ? (
          <>
            <p className="error" role="alert">
              Could not read the nodes: {describeError(firstError)}
            </p>
            <Shown onShown={onShown} />
          </>
        ) : (
          <p role="status">Loading nodes…</p>
        )}
      </section>
    );

  return (
    <section aria-labelledby="nodes-heading">
      <h2 id="nodes-heading">Nodes</h2>
      {error !== null && (
        <p className="error" role="alert">
          Could not read the nodes: {describeError(error)}
        </p>
      )}
      {minted.data !== undefined && (
        <p className="hint">
          {plural(minted.data, "license")} minted; {plural(rows.length, "node")}, {liveCount} live. Refreshed every 3 s.
        </p>
      )}
      <DataTable
        caption="Nodes"
        columns={columns}
        rows={rows.map((node, index) => ({ ...node, heartbeat: heartbeats.data?.[index] }))}
        rowKey={(node) => node.operator}
        rowProps={(node) => ({ "data-testid": "node-row", "data-operator": node.operator })}
        extraRows={
          undelegated.length > 0 && (
            <tr data-testid="undelegated-row">
              <td>Not delegated</td>
              <td>{licenseList(undelegated)}</td>
              <td>
                <span className="badge down">Not live</span>
              </td>
              <td className="hint">No operator: never delegated, undelegated, or transferred since the delegation.</td>
            </tr>
          )
        }
        empty={ids.length === 0 ? "No license has been minted yet." : undefined}
      />
      <QosSection client={client} onShown={onShown} />
    </section>
  );
}

/** "1 license", "3 licenses". */
function plural(count: bigint | number, noun: string): string {
  return `${count.toString()} ${count.toString() === "1" ? noun : `${noun}s`}`;
}

import { keepPreviousData } from "@tanstack/react-query";
import { useRef, useState } from "react";
import { zeroAddress, type Address } from "viem";
import { useConfig, useConnection, useReadContract, useReadContracts } from "wagmi";

import { HexLink } from "../components/ExplorerLink";
import { useAppSettings } from "../app-context";
import { AddressField } from "../components/AddressField";
import { ChainNotice } from "../components/ChainNotice";
import { DataTable, type Column } from "../components/DataTable";
import { TxButton } from "../components/TxButton";
import { WalletRequired } from "../components/WalletRequired";
import { nodeRegistryAbi } from "../generated/abis";
import { useOwnedLicenses } from "../hooks/useOwnedLicenses";
import { parseAddressInput } from "../lib/addresses";
import { formatDuration, formatTime } from "../lib/format";
import { simulateAndWrite } from "../lib/transactions";

/** One owned license as the registry sees it. */
interface LicenseRow {
  id: bigint;
  /** The delegation's operator, or undefined (none: never delegated, undelegated, or ended by a transfer). */
  operator: Address | undefined;
  live: boolean;
}

/**
 * The delegation page (specification 4.5.3): connect the license-holding wallet, select licenses, click
 * Delegate, enter the node's burner address, review what will be signed, and click Delegate again to
 * send one `delegate` for all of them. Undelegate removes the selected delegations.
 */
export default function DelegatePage() {
  const { address } = useConnection();
  const { licenseIds, error } = useOwnedLicenses(address);
  // The last complete list stays on screen while a changed one loads (a license bought, delegated or
  // sold), so the open form and its transaction's outcome are not swept away by a reload.
  const rows = useLastDefined(useLicenseRows(licenseIds), address);
  const [selected, setSelected] = useState<bigint[]>([]);
  const [delegating, setDelegating] = useState(false);
  const chosen = selected.filter((id) => rows?.some((row) => row.id === id) === true);

  return (
    <section>
      <ChainNotice expected="l2" />
      {address === undefined ? (
        <WalletRequired>Connect the wallet that holds your node licenses to delegate them to a node's burner.</WalletRequired>
      ) : error !== null ? (
        <p className="error" role="alert">
          Could not read your licenses: {error.message}
        </p>
      ) : rows === undefined ? (
        <p role="status">Loading your licenses…</p>
      ) : rows.length === 0 ? (
        <p>This wallet holds no node license. Buy one on the Licenses page.</p>
      ) : (
        <>
          <LicenseTable rows={rows} selected={chosen} onChange={setSelected} />
          {delegating ? (
            <DelegateForm licenseIds={chosen} owner={address} onDone={() => setDelegating(false)} />
          ) : (
            <div className="panel">
              <button type="button" disabled={chosen.length === 0} onClick={() => setDelegating(true)}>
                Delegate
              </button>{" "}
              <UndelegateButton rows={rows.filter((row) => chosen.includes(row.id))} />
              {chosen.length === 0 && <p className="hint">Select the licenses to delegate or undelegate.</p>}
            </div>
          )}
        </>
      )}
    </section>
  );
}

/** `value`, or while it is undefined the last defined value seen for the same `key`. */
function useLastDefined<T>(value: T | undefined, key: unknown): T | undefined {
  const last = useRef<{ key: unknown; value: T } | undefined>(undefined);
  if (value !== undefined) last.current = { key, value };
  const remembered = last.current;
  return value ?? (remembered !== undefined && remembered.key === key ? remembered.value : undefined);
}

/** Operator and liveness of each license, re-read every few seconds. */
function useLicenseRows(licenseIds: bigint[] | undefined): LicenseRow[] | undefined {
  const { config, chains } = useAppSettings();
  const registry = { address: config.contracts.l2.NodeRegistry, abi: nodeRegistryAbi, chainId: chains.l2.id } as const;
  const ids = licenseIds ?? [];
  const reads = useReadContracts({
    contracts: ids.flatMap((id) => [
      { ...registry, functionName: "operatorOf", args: [id] } as const,
      { ...registry, functionName: "isLive", args: [id] } as const,
    ]),
    allowFailure: false,
    query: { enabled: ids.length > 0, refetchInterval: 5_000, placeholderData: keepPreviousData },
  });
  if (licenseIds === undefined) return undefined;
  if (licenseIds.length === 0) return [];
  if (reads.data === undefined) return undefined;
  const data = reads.data as unknown[];
  // While a changed list loads, the previous answer covers the previous ids only.
  if (data.length !== ids.length * 2) return undefined;
  return ids.map((id, index) => {
    const operator = data[index * 2] as Address;
    return { id, operator: operator === zeroAddress ? undefined : operator, live: data[index * 2 + 1] as boolean };
  });
}

function LicenseTable({ rows, selected, onChange }: { rows: LicenseRow[]; selected: bigint[]; onChange: (ids: bigint[]) => void }) {
  const toggle = (id: bigint, on: boolean) => onChange(on ? [...selected, id] : selected.filter((other) => other !== id));
  const columns: Array<Column<LicenseRow>> = [
    {
      header: "Select",
      cell: (row) => (
        <input
          type="checkbox"
          id={`license-${row.id}`}
          checked={selected.includes(row.id)}
          onChange={(event) => toggle(row.id, event.target.checked)}
        />
      ),
    },
    { header: "License", cell: (row) => <label htmlFor={`license-${row.id}`}>License {row.id.toString()}</label> },
    {
      header: "Operator (burner)",
      cell: (row) => (row.operator === undefined ? "None" : <HexLink chain="l2" kind="address" value={row.operator} full />),
      cellProps: () => ({ "data-testid": "operator" }),
    },
    {
      header: "Live",
      cell: (row) => (row.live ? <span className="badge live">Live</span> : <span className="badge down">Not live</span>),
    },
    { header: "Last heartbeat", cell: (row) => (row.operator === undefined ? "—" : <LastHeartbeat operator={row.operator} />) },
  ];
  return (
    <DataTable
      caption="Your licenses"
      columns={columns}
      rows={rows}
      rowKey={(row) => row.id.toString()}
      rowProps={(row) => ({ "data-testid": "license-row", "data-license-id": row.id.toString() })}
    />
  );
}

/** When `operator` last sent a heartbeat, and how long ago. */
function LastHeartbeat({ operator }: { operator: Address }) {
  const heartbeat = useHeartbeat(operator);
  if (heartbeat === undefined) return <>…</>;
  if (heartbeat === 0n) return <>Never</>;
  const age = BigInt(Math.floor(Date.now() / 1000)) - heartbeat;
  return (
    <>
      {formatTime(heartbeat)} ({formatDuration(age > 0n ? age : 0n)} ago)
    </>
  );
}

/** The time of `operator`'s last heartbeat (0 = never), or undefined while loading. */
function useHeartbeat(operator: Address | undefined): bigint | undefined {
  const { config, chains } = useAppSettings();
  const read = useReadContract({
    address: config.contracts.l2.NodeRegistry,
    abi: nodeRegistryAbi,
    chainId: chains.l2.id,
    functionName: "heartbeatOf",
    args: operator === undefined ? undefined : [operator],
    query: { enabled: operator !== undefined, refetchInterval: 5_000 },
  });
  return read.data === undefined ? undefined : BigInt(read.data.timestamp);
}

/** Reads a burner address as typed: valid, checksum-correct when mixed-case, returned checksummed. */
export function checkBurnerAddress(input: string): { address?: Address; problem?: string } {
  const parsed = parseAddressInput(input);
  if (parsed.address === zeroAddress) return { problem: "The zero address cannot run a node." };
  return parsed;
}

function DelegateForm({ licenseIds, owner, onDone }: { licenseIds: bigint[]; owner: Address; onDone: () => void }) {
  const { config, chains } = useAppSettings();
  const wagmiConfig = useConfig();
  const [input, setInput] = useState("");
  const { address: burner, problem } = checkBurnerAddress(input);
  const heartbeat = useHeartbeat(burner);
  return (
    <div className="panel">
      <h2>
        Delegate {licenseIds.length === 1 ? "license" : "licenses"} {licenseIds.join(", ")}
      </h2>
      <AddressField
        id="burner"
        label="Burner wallet address"
        hint="The address your circuit node prints when it starts (its burner wallet), not your own wallet."
        value={input}
        onChange={setInput}
        problem={problem}
      >
        {burner !== undefined && burner === owner && (
          <p className="warning" role="alert">
            This is the wallet holding the licenses. A node should sign with a separate burner wallet.
          </p>
        )}
        {burner !== undefined && heartbeat === 0n && (
          <p className="warning" role="alert" data-testid="no-heartbeat-warning">
            This address has never sent a heartbeat. Check that it is your node's burner; the licenses will not be live until the node runs.
          </p>
        )}
      </AddressField>
      {burner !== undefined && (
        <div data-testid="signing-preview">
          <h3>What you will sign</h3>
          <dl className="facts">
            <dt>Network</dt>
            <dd>
              {chains.l2.name} (chain {chains.l2.id})
            </dd>
            <dt>Contract</dt>
            <dd>
              NodeRegistry <HexLink chain="l2" kind="address" value={config.contracts.l2.NodeRegistry} full />
            </dd>
            <dt>Call</dt>
            <dd>
              <code>
                delegate([{licenseIds.join(", ")}], {burner})
              </code>
            </dd>
            <dt>Effect</dt>
            <dd>
              {burner} operates {licenseIds.length === 1 ? "license" : "licenses"} {licenseIds.join(", ")} until you undelegate or the
              license changes hands.
            </dd>
          </dl>
        </div>
      )}
      <TxButton
        chainId={chains.l2.id}
        disabled={burner === undefined || licenseIds.length === 0}
        disabledReason={burner === undefined ? "Enter the burner wallet address." : "Select at least one license."}
        send={() =>
          simulateAndWrite(wagmiConfig, {
            address: config.contracts.l2.NodeRegistry,
            abi: nodeRegistryAbi,
            functionName: "delegate",
            args: [licenseIds, burner!],
            chainId: chains.l2.id,
          })
        }
      >
        Delegate
      </TxButton>
      <button type="button" className="secondary" onClick={onDone}>
        Close
      </button>
    </div>
  );
}

function UndelegateButton({ rows }: { rows: LicenseRow[] }) {
  const { config, chains } = useAppSettings();
  const wagmiConfig = useConfig();
  const notDelegated = rows.filter((row) => row.operator === undefined).map((row) => row.id);
  return (
    <TxButton
      chainId={chains.l2.id}
      variant="secondary"
      disabled={rows.length === 0 || notDelegated.length > 0}
      disabledReason={notDelegated.length > 0 ? `License ${notDelegated.join(", ")} is not delegated.` : undefined}
      send={() =>
        simulateAndWrite(wagmiConfig, {
          address: config.contracts.l2.NodeRegistry,
          abi: nodeRegistryAbi,
          functionName: "undelegate",
          args: [rows.map((row) => row.id)],
          chainId: chains.l2.id,
        })
      }
    >
      Undelegate
    </TxButton>
  );
}

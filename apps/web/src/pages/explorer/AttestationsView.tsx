import { useQuery } from "@tanstack/react-query";

import { useAppSettings } from "../../app-context";
import { DataTable, type Column } from "../../components/DataTable";
import { HexLink } from "../../components/ExplorerLink";
import { verificationRegistryAbi } from "../../generated/abis";
import { formatAmount, formatTime } from "../../lib/format";
import { chainKind, subjectText } from "../network/encoding";
import { Addr, Loaded } from "./parts";
import { useExplorer } from "./useExplorer";

interface Recorded {
  transactionHash: `0x${string}`;
  logIndex: number;
  payer: `0x${string}`;
  chain: number;
  owner: `0x${string}`;
  asset: `0x${string}`;
  balance: bigint;
  sourceBlock: bigint;
  issuedAt: bigint;
  fee: bigint;
  /** The licenses whose signatures were recorded (and paid the fee). */
  licenseIds: readonly bigint[];
}

/** `/explorer/attestations`: the attested answers recorded in the registry (`AttestationRecorded`), newest first. */
export function AttestationsView() {
  const { config } = useAppSettings();
  const { clients } = useExplorer();
  const recorded = useQuery({
    queryKey: ["explorer", "attestations"],
    refetchInterval: 5_000,
    queryFn: async (): Promise<Recorded[]> => {
      const logs = await clients.l2.getContractEvents({
        address: config.contracts.l2.VerificationRegistry,
        abi: verificationRegistryAbi,
        eventName: "AttestationRecorded",
        fromBlock: BigInt(config.l2.fromBlock),
      });
      return logs
        .map((log) => ({
          transactionHash: log.transactionHash,
          logIndex: log.logIndex,
          ...(log.args as Omit<Recorded, "transactionHash" | "logIndex">),
        }))
        .reverse();
    },
  });
  const columns: Array<Column<Recorded>> = [
    { header: "Transaction", rowHeader: true, cell: (row) => <HexLink chain="l2" kind="tx" value={row.transactionHash} /> },
    { header: "Paid by", cell: (row) => <Addr chain="l2" address={row.payer} /> },
    { header: "Kind", cell: (row) => chainKind(row.chain) },
    { header: "Owner", cell: (row) => <code title={subjectText(row.chain, row.owner)}>{subjectText(row.chain, row.owner)}</code> },
    { header: "Asset", cell: (row) => <code title={subjectText(row.chain, row.asset)}>{subjectText(row.chain, row.asset)}</code> },
    { header: "Balance (base units)", cell: (row) => row.balance.toLocaleString("en-US") },
    { header: "Source block or slot", cell: (row) => row.sourceBlock.toString() },
    { header: "Issued", cell: (row) => formatTime(row.issuedAt) },
    { header: "Fee", cell: (row) => formatAmount(row.fee, 18, 18) },
    { header: "Signed by licenses", cell: (row) => row.licenseIds.map(String).join(", ") },
  ];
  return (
    <>
      <h1>Recorded attestations</h1>
      <p className="hint">Attested answers that the attestation verifier recorded in the verification registry, newest first.</p>
      <Loaded query={recorded} what="the attestations">
        {(rows) => (
          <DataTable
            caption="Recorded attestations"
            columns={columns}
            rows={rows}
            rowKey={(row) => `${row.transactionHash}-${row.logIndex}`}
            rowProps={() => ({ "data-testid": "attestation" })}
            empty="No attestation has been recorded yet."
          />
        )}
      </Loaded>
    </>
  );
}

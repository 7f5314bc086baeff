import type { LicenseQos } from "@avn/protocol/qos";
import { getAddress, type PublicClient } from "viem";
import { useState } from "react";

import { DataTable, type Column } from "../../components/DataTable";
import { HexLink } from "../../components/ExplorerLink";
import { describeError } from "../../lib/errors";
import { formatBps, formatChallenges, formatTime } from "../../lib/format";
import { Shown } from "./Shown";
import { useEpochQos, type EpochQos } from "./useEpochQos";

/** An offered epoch as the selector names it. */
export function epochLabel({ frame, current }: EpochQos): string {
  return current
    ? `Epoch ${frame.epoch} (current, ends ${formatTime(frame.end)})`
    : `Epoch ${frame.epoch} (${formatTime(frame.start)} to ${formatTime(frame.end)})`;
}

/** A figure's cell: its test id (`qos-score`, `qos-uptime`, …) to read it by, kept on one line. */
const figure = (testId: string) => () => ({ "data-testid": testId, className: "figure" });

/** The per-license figures. */
const COLUMNS: ReadonlyArray<Column<LicenseQos>> = [
  { header: "License", rowHeader: true, cell: (qos) => `#${qos.licenseId.toString()}` },
  {
    header: "Operator",
    cell: (qos) => (qos.operator === null ? "Not delegated" : <HexLink chain="l2" kind="address" value={getAddress(qos.operator)} />),
  },
  { header: "Score", cell: (qos) => formatBps(qos.scoreBps), cellProps: figure("qos-score") },
  { header: "Uptime", cell: (qos) => formatBps(qos.uptimeBps), cellProps: figure("qos-uptime") },
  { header: "Participation", cell: (qos) => formatBps(qos.participationBps), cellProps: figure("qos-participation") },
  { header: "Accuracy", cell: (qos) => formatBps(qos.accuracyBps), cellProps: figure("qos-accuracy") },
  {
    header: "Median vote delay (blocks)",
    cell: (qos) => qos.medianVoteDelayBlocks.toLocaleString("en-US"),
    cellProps: figure("qos-delay"),
  },
  { header: "Jobs asked", cell: (qos) => qos.jobsAsked.toLocaleString("en-US"), cellProps: figure("qos-asked") },
  { header: "Votes", cell: (qos) => qos.votes.toLocaleString("en-US"), cellProps: figure("qos-votes") },
  {
    header: "Agreed / disagreed",
    cell: (qos) => `${qos.agreed.toLocaleString("en-US")} / ${qos.disagreed.toLocaleString("en-US")}`,
    cellProps: figure("qos-agreement"),
  },
  // Capacity as the chain measures it (challenge jobs), in place of what each node's heartbeat claims.
  {
    header: "Challenges answered / asked",
    cell: (qos) => formatChallenges(qos.challengeJobsAnswered, qos.challengeJobsAsked, qos.challengeMedianVoteDelayBlocks),
    cellProps: () => ({ "data-testid": "qos-challenges" }),
  },
  {
    header: "Attestations recorded",
    cell: (qos) => qos.attestations.toLocaleString("en-US"),
    cellProps: figure("qos-attestations"),
  },
];

/**
 * Every license's quality of service in the epoch chosen (the current one, or one of the three before):
 * computed in the page by `epochQos` from the registries' events, as the API publishes it.
 */
export function QosSection({ client, onShown }: { client: PublicClient; onShown: () => void }) {
  const qos = useEpochQos(client);
  // Undefined follows the current epoch, also when it turns while the page is open.
  const [chosen, setChosen] = useState<number>();
  const epochs = qos.data?.epochs ?? [];
  const shown = epochs.find((entry) => entry.frame.epoch === chosen) ?? epochs[0];
  const rows = shown === undefined ? [] : [...shown.figures.values()];

  return (
    <section aria-labelledby="qos-heading">
      <h3 id="qos-heading">Quality of service per license</h3>
      <details className="hint">
        <summary>How it is measured</summary>
        <p>
          From the registries' events alone, as the API publishes them: uptime (the epoch's liveness windows that hold a heartbeat),
          participation (jobs answered of those asked while live), accuracy (votes agreeing with the quorum's answer), the median blocks
          from a job's request to the vote, and the challenge jobs answered (capacity). Score = uptime (full from 95 %) × participation ×
          accuracy × timeliness (full up to 2 blocks); 0 from two disagreeing votes in the epoch.
        </p>
      </details>
      {qos.error !== null && (
        <p className="error" role="alert">
          Could not read the quality of service: {describeError(qos.error)}
        </p>
      )}
      {shown !== undefined && (
        <>
          <div className="field">
            <label htmlFor="qos-epoch">Epoch</label>
            <select
              id="qos-epoch"
              aria-describedby="qos-read-at"
              value={shown.frame.epoch}
              onChange={(event) => {
                const epoch = Number(event.target.value);
                setChosen(epoch === epochs[0].frame.epoch ? undefined : epoch);
              }}
            >
              {epochs.map((entry) => (
                <option key={entry.frame.epoch} value={entry.frame.epoch}>
                  {epochLabel(entry)}
                </option>
              ))}
            </select>
            <p className="hint" id="qos-read-at">
              {shown.current ? "So far in the epoch, read" : "The whole epoch, read"} at L2 block {qos.data!.block.toString()}; refreshed
              every 5 s.
            </p>
          </div>
          <DataTable
            caption={`Quality of service per license, epoch ${shown.frame.epoch}${shown.current ? " (current)" : ""}`}
            columns={COLUMNS}
            rows={rows}
            rowKey={(row) => row.licenseId.toString()}
            rowProps={(row) => ({ "data-testid": "qos-row", "data-license-id": row.licenseId.toString() })}
            empty="No license has been delegated yet."
          />
        </>
      )}
      {qos.data === undefined && qos.error === null ? (
        <p role="status">Loading the quality of service from the registries' events…</p>
      ) : (
        // The sections below come once this one has its table or its error (NodesSection).
        <Shown onShown={onShown} />
      )}
    </section>
  );
}

import type { Hex, PublicClient } from "viem";

import { JobLink } from "../../components/ExplorerLink";
import { useAppSettings } from "../../app-context";
import { DataTable, type Column } from "../../components/DataTable";
import { shortAddress } from "../../lib/format";
import { chainKind, subjectText } from "./encoding";
import { JOB_WINDOW, type JobRow } from "./job-logs";
import { useLiveJobs } from "./useLiveJobs";

const STATUS_TEXT: Record<JobRow["status"], string> = { open: "Open", fulfilled: "Fulfilled", expired: "Expired" };

/** An owner or asset, shortened for phone widths; the full value stays in the title and for copying. */
function Subject({ chain, value }: { chain: number; value: Hex }) {
  const text = subjectText(chain, value);
  return <code title={text}>{shortAddress(text)}</code>;
}

/** The jobs table's columns. */
const JOB_COLUMNS: ReadonlyArray<Column<JobRow>> = [
  { header: "Job", cell: (job) => <JobLink id={job.id} /> },
  { header: "Kind", cell: (job) => chainKind(job.chain!) },
  { header: "Owner", cell: (job) => <Subject chain={job.chain!} value={job.owner!} /> },
  { header: "Asset", cell: (job) => <Subject chain={job.chain!} value={job.asset!} /> },
  { header: "Status", cell: (job) => STATUS_TEXT[job.status] },
  // Raw base units: the asset's decimals are not on this chain.
  { header: "Balance", cell: (job) => (job.balance === undefined ? "—" : job.balance.toLocaleString("en-US")) },
  { header: "Votes", cell: (job) => job.votes },
];

/** The latest verification jobs, updated in place as requests, votes, results and expiries are logged. */
export function JobsSection({ client, live }: { client: PublicClient; live: boolean }) {
  const { config } = useAppSettings();
  const { jobs, loaded, error, pushed } = useLiveJobs(client, live, config.contracts.l2.VerificationRegistry, BigInt(config.l2.fromBlock));
  // Newest first; a row needs its request (or result) event to say what it is about.
  const rows = [...jobs.values()].filter((job) => job.chain !== undefined).sort((a, b) => (a.id < b.id ? 1 : -1));

  return (
    <section aria-labelledby="jobs-heading">
      <h2 id="jobs-heading">Verification jobs</h2>
      <p className="hint">
        The latest {JOB_WINDOW} jobs, {pushed ? "updated live over WebSocket" : "updated by polling every 2 s"}.
      </p>
      {error !== undefined && (
        <p className="error" role="alert">
          Could not follow the jobs: {error}
        </p>
      )}
      <DataTable
        caption="Verification jobs"
        columns={JOB_COLUMNS}
        rows={rows}
        rowKey={(job) => job.id.toString()}
        rowProps={(job) => ({ "data-testid": "job-row", "data-job-id": job.id.toString(), "data-status": job.status })}
        empty={loaded ? "No job has been requested yet." : undefined}
      />
      {!loaded && error === undefined && <p role="status">Loading jobs…</p>}
    </section>
  );
}

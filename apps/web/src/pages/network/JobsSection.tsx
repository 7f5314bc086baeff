import type { Hex, PublicClient } from "viem";

import { useAppSettings } from "../../app-context";
import { shortAddress } from "../../lib/format";
import { chainKind, subjectText } from "./encoding";
import { JOB_WINDOW, useLiveJobs, type JobRow } from "./useLiveJobs";

const STATUS_TEXT: Record<JobRow["status"], string> = { open: "Open", fulfilled: "Fulfilled", expired: "Expired" };

/** An owner or asset, shortened for phone widths; the full value stays in the title and for copying. */
function Subject({ chain, value }: { chain: number; value: Hex }) {
  const text = subjectText(chain, value);
  return <code title={text}>{shortAddress(text)}</code>;
}

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
      <div className="table-wrap" tabIndex={0}>
        <table>
          <caption>Verification jobs</caption>
          <thead>
            <tr>
              <th scope="col">Job</th>
              <th scope="col">Kind</th>
              <th scope="col">Owner</th>
              <th scope="col">Asset</th>
              <th scope="col">Status</th>
              <th scope="col">Balance</th>
              <th scope="col">Votes</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((job) => (
              <tr key={job.id.toString()} data-testid="job-row" data-job-id={job.id.toString()} data-status={job.status}>
                <td>#{job.id.toString()}</td>
                <td>{chainKind(job.chain!)}</td>
                <td>
                  <Subject chain={job.chain!} value={job.owner!} />
                </td>
                <td>
                  <Subject chain={job.chain!} value={job.asset!} />
                </td>
                <td>{STATUS_TEXT[job.status]}</td>
                {/* Raw base units: the asset's decimals are not on this chain. */}
                <td>{job.balance === undefined ? "—" : job.balance.toLocaleString("en-US")}</td>
                <td>{job.votes}</td>
              </tr>
            ))}
            {loaded && rows.length === 0 && (
              <tr>
                <td colSpan={7}>No job has been requested yet.</td>
              </tr>
            )}
          </tbody>
        </table>
      </div>
      {!loaded && error === undefined && <p role="status">Loading jobs…</p>}
    </section>
  );
}

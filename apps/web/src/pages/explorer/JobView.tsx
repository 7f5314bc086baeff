import { useQuery } from "@tanstack/react-query";
import { useParams } from "react-router";
import { pad, parseEventLogs, toHex } from "viem";

import { useAppSettings } from "../../app-context";
import { DataTable, type Column } from "../../components/DataTable";
import { HexLink } from "../../components/ExplorerLink";
import { jobStory, IGNORE_REASONS, type JobEvent, type JobVote } from "../../explorer/job";
import { verificationRegistryAbi } from "../../generated/abis";
import { formatAmount, formatTime } from "../../lib/format";
import { chainKind, subjectText } from "../network/encoding";
import { Addr, Fact, Loaded } from "./parts";
import { useExplorer } from "./useExplorer";

/** The registry's events that carry the job id as their first indexed argument. */
const JOB_EVENTS = new Set([
  "VerificationRequested",
  "VoteSubmitted",
  "SubmissionIgnored",
  "VerificationFulfilled",
  "JobExpired",
  "CallbackFailed",
]);
const STATUS = ["None", "Open", "Finalized", "Expired"];

/** `/explorer/job/<id>`: a verification job's request, votes, finalization, fee split and callback. */
export function JobView() {
  const params = useParams();
  const id = /^\d+$/.test(params.id ?? "") ? BigInt(params.id!) : undefined;
  const { config } = useAppSettings();
  const { clients } = useExplorer();
  const registry = config.contracts.l2.VerificationRegistry;
  const job = useQuery({
    queryKey: ["explorer", "job", id?.toString()],
    enabled: id !== undefined,
    // An open job gathers votes: followed until it is final.
    refetchInterval: (query) => (query.state.data?.view.status === 1 || query.state.data?.view.status === 0 ? 2_000 : false),
    queryFn: async () => {
      const client = clients.l2;
      const [view, logs] = await Promise.all([
        client.readContract({ address: registry, abi: verificationRegistryAbi, functionName: "getJob", args: [id!] }),
        // One read: every registry log whose first indexed argument is this job id.
        client.getLogs({ address: registry, topics: [null, pad(toHex(id!))], fromBlock: BigInt(config.l2.fromBlock) } as never),
      ]);
      const events: JobEvent[] = parseEventLogs({ abi: verificationRegistryAbi, logs })
        .filter((log) => JOB_EVENTS.has(log.eventName))
        .map((log) => ({
          eventName: log.eventName,
          args: log.args as Record<string, unknown>,
          transactionHash: log.transactionHash,
          blockNumber: log.blockNumber,
          logIndex: log.logIndex,
        }));
      const story = jobStory(id!, events);
      const requester = story.request?.requester;
      const [code, finalizedAt] = await Promise.all([
        requester === undefined ? undefined : client.getCode({ address: requester }),
        story.result === undefined
          ? undefined
          : client.getBlock({ blockNumber: story.result.blockNumber }).then((block) => block.timestamp),
      ]);
      return { view, story, requesterIsContract: code !== undefined && code !== "0x", finalizedAt };
    },
  });
  if (id === undefined) return <h1>Not a job number: {params.id}</h1>;

  return (
    <>
      <h1>Verification job #{id.toString()}</h1>
      <Loaded query={job} what="the job">
        {({ view, story, requesterIsContract, finalizedAt }) => {
          if (story.request === undefined)
            return <p data-testid="job-status">No such job: the registry has logged no request #{id.toString()}.</p>;
          const request = story.request;
          const voteColumns: Array<Column<JobVote>> = [
            { header: "License", rowHeader: true, cell: (vote) => `#${vote.licenseId}` },
            { header: "Operator", cell: (vote) => <Addr chain="l2" address={vote.operator} /> },
            { header: "Answer hash", cell: (vote) => <code title={vote.resultHash}>{vote.resultHash.slice(0, 10)}…</code> },
            { header: "Source block", cell: (vote) => vote.sourceBlock.toString() },
            {
              header: "Agrees",
              cell: (vote) => (vote.agreed === undefined ? "—" : vote.agreed ? "Agreed" : "Disagreed"),
              cellProps: () => ({ "data-testid": "vote-agreed" }),
            },
            { header: "Fee share", cell: (vote) => (vote.feeShare === undefined ? "—" : formatAmount(vote.feeShare, 18, 18)) },
            { header: "Transaction", cell: (vote) => <HexLink chain="l2" kind="tx" value={vote.transactionHash} /> },
          ];
          const agreed = story.votes.filter((vote) => vote.agreed === true).length;
          return (
            <>
              <dl className="facts">
                <Fact term="Status" testId="job-status">
                  {STATUS[view.status] ?? view.status}
                </Fact>
                <Fact term="Requested by">
                  <Addr chain="l2" address={request.requester} /> in <HexLink chain="l2" kind="tx" value={request.transactionHash} />
                </Fact>
                <Fact term="Question">
                  {chainKind(request.chain)} balance of <code>{subjectText(request.chain, request.owner)}</code> in{" "}
                  <code>{subjectText(request.chain, request.asset)}</code>
                </Fact>
                <Fact term="Fee">{formatAmount(request.fee, 18, 18)} staked tokens</Fact>
                <Fact term="Quorum">{view.quorum} licenses</Fact>
                {view.status === 1 && <Fact term="Deadline">{formatTime(view.deadline)}</Fact>}
              </dl>

              <h2>Votes ({story.votes.length})</h2>
              <DataTable
                caption={`Votes on job #${id}`}
                columns={voteColumns}
                rows={story.votes}
                rowKey={(vote) => vote.licenseId.toString()}
                rowProps={(vote) => ({ "data-testid": "job-vote", "data-license-id": vote.licenseId.toString() })}
                empty="No vote yet."
              />
              {story.ignored.length > 0 && (
                <>
                  <h3>Submissions skipped</h3>
                  <ul>
                    {story.ignored.map((skip, index) => (
                      <li key={index}>
                        <Addr chain="l2" address={skip.operator} />: {IGNORE_REASONS[skip.reason] ?? `reason ${skip.reason}`} (
                        <HexLink chain="l2" kind="tx" value={skip.transactionHash} />)
                      </li>
                    ))}
                  </ul>
                </>
              )}

              <h2>Outcome</h2>
              {story.result !== undefined ? (
                <dl className="facts">
                  <Fact term="Finalized" testId="job-finalized">
                    in <HexLink chain="l2" kind="tx" value={story.result.transactionHash} />
                    {finalizedAt !== undefined && ` at ${formatTime(finalizedAt)}`}
                  </Fact>
                  <Fact term="Balance (base units)" testId="job-balance">
                    {story.result.balance.toLocaleString("en-US")}
                  </Fact>
                  <Fact term="Query result hash">
                    <code>{story.result.queryResultHash}</code>
                  </Fact>
                  <Fact term="Source block">{story.result.sourceBlock.toString()}</Fact>
                  <Fact term="Fee split" testId="fee-split">
                    {formatAmount(request.fee, 18, 18)} staked tokens among the {agreed} agreeing license{agreed === 1 ? "" : "s"} (
                    {story.votes
                      .filter((vote) => vote.feeShare !== undefined)
                      .map((vote) => `#${vote.licenseId}: ${formatAmount(vote.feeShare!, 18, 18)}`)
                      .join(", ")}
                    ); disagreeing votes get nothing. The fees are burned and paid in primary tokens when the owners claim them.
                  </Fact>
                  <Fact term="Callback" testId="job-callback">
                    {story.callbackFailed
                      ? "The consumer's callback failed (reverted or ran out of gas); the result stands."
                      : requesterIsContract && view.callbackGasLimit > 0
                        ? `onVerificationFulfilled called on the requester with ${view.callbackGasLimit.toLocaleString("en-US")} gas, without failing.`
                        : requesterIsContract
                          ? "None: the requesting contract set no callback gas."
                          : "None: the requester is an account, not a contract."}
                  </Fact>
                </dl>
              ) : story.expired !== undefined ? (
                <p>
                  Expired: {formatAmount(story.expired.refundedFee, 18, 18)} staked tokens went back to the requester&apos;s collateral (
                  <HexLink chain="l2" kind="tx" value={story.expired.transactionHash} />
                  ).
                </p>
              ) : (
                <p role="status">Open: waiting for {view.quorum} agreeing votes.</p>
              )}
            </>
          );
        }}
      </Loaded>
    </>
  );
}

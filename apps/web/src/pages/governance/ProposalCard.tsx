import { useQuery } from "@tanstack/react-query";

import { HexLink } from "../../components/ExplorerLink";
import { useAppSettings } from "../../app-context";
import { describeError } from "../../lib/errors";
import { formatTime, shortAddress } from "../../lib/format";
import { describeL2Call } from "@avn/protocol/governance/proposal";
import type { GovernanceAddresses } from "./addresses";
import { readL2Outcome } from "./l2-outcome";
import { ProposalActions } from "./ProposalActions";
import { nextStep, type L2Outcome, type ProposalStatus } from "./proposal-status";
import { PROPOSALS_REFRESH_MS } from "./useProposals";
import { usePublicClients } from "./usePublicClients";
import { formatVotes } from "@avn/protocol/governance/rules";

/** One proposal: what it changes on L2, where its vote stands, what happens next, and what can be done now. */
export function ProposalCard({
  addresses,
  proposal,
  description,
}: {
  addresses: GovernanceAddresses;
  proposal: ProposalStatus;
  description: string | undefined;
}) {
  const { config } = useAppSettings();
  const l2 = useL2Outcome(addresses, proposal);
  const id = proposal.id.toString();
  const title = description?.split("\n")[0] ?? "(description not found)";
  return (
    <article className="panel proposal" aria-labelledby={`proposal-${id}-title`} data-testid="proposal" data-proposal-id={id}>
      <h3 id={`proposal-${id}-title`}>
        Proposal {id}: {title}
      </h3>
      <p>
        <span className={`badge state-${proposal.state.toLowerCase()}`} data-testid="proposal-state">
          {proposal.state}
        </span>
      </p>
      <dl className="facts">
        <dt>Proposed by</dt>
        <dd>
          <HexLink chain="l1" kind="address" value={proposal.proposer} />
        </dd>
        <dt>Changes on L2</dt>
        <dd data-testid="proposal-changes">
          <L2Changes addresses={addresses} proposal={proposal} />
        </dd>
        <dt>Votes</dt>
        <dd data-testid="tally">
          <Tally proposal={proposal} />
        </dd>
        <dt>Vote</dt>
        <dd>
          snapshot at block {proposal.snapshotBlock.toString()}, open until block {proposal.deadlineBlock.toString()}
        </dd>
        {proposal.state === "Executed" && (
          <>
            <dt>On L2</dt>
            <dd data-testid="l2-outcome">
              {l2.error !== null && l2.data === undefined
                ? `Could not read the L2 outcome: ${describeError(l2.error)}`
                : describeOutcome(l2.data, proposal)}
            </dd>
          </>
        )}
        <dt>Next</dt>
        <dd data-testid="next-step">{nextStep(proposal, config.l1.blockSeconds, l2.data)}</dd>
      </dl>
      <ProposalActions addresses={addresses} proposal={proposal} />
    </article>
  );
}

function L2Changes({ addresses, proposal }: { addresses: GovernanceAddresses; proposal: ProposalStatus }) {
  const { batch } = proposal;
  if (batch === undefined) return <>Not an L2 protocol change: its actions are not one message to the governance executor.</>;
  return (
    <>
      <ul className="calls">
        {batch.calls.map((call, index) => (
          <li key={index}>
            <code>{describeL2Call(call, addresses.l2)}</code>
          </li>
        ))}
      </ul>
      <span className="hint">Runnable on L2 until {formatTime(batch.deadline)} (L2 time).</span>
      {batch.executor.toLowerCase() !== addresses.executor.toLowerCase() && (
        <p className="warning">
          It sends its batch to <HexLink chain="l2" kind="address" value={batch.executor} full />, not to this deployment's governance
          executor.
        </p>
      )}
    </>
  );
}

/** For, against, abstain, and the quorum (for and abstain count towards it). */
function Tally({ proposal }: { proposal: ProposalStatus }) {
  const { votes, quorum } = proposal;
  const counted = votes.for + votes.abstain;
  return (
    <>
      For {formatVotes(votes.for)} · Against {formatVotes(votes.against)} · Abstain {formatVotes(votes.abstain)}
      <br />
      {quorum === undefined
        ? "Quorum: set at the snapshot block (a share of the supply then)"
        : `Quorum ${formatVotes(quorum)}: ${counted >= quorum ? "reached" : `${formatVotes(quorum - counted)} more needed`}`}
    </>
  );
}

function describeOutcome(outcome: L2Outcome | undefined, proposal: ProposalStatus): string {
  if (outcome === undefined) return "Checking L2…";
  switch (outcome.kind) {
    case "no message":
      return "Its execution sent no message to the governance executor.";
    case "awaiting relay":
      return `Awaiting relay to L2 (message ${shortAddress(outcome.messageHash)}).`;
    case "executed":
      return `Executed on L2 (message ${shortAddress(outcome.messageHash)}).`;
    case "failed":
      return `Failed on L2: replayable by anyone${proposal.batch === undefined ? "" : ` until ${formatTime(proposal.batch.deadline)}`} (message ${shortAddress(outcome.messageHash)}).`;
    case "expired":
      return `Not run on L2 before its deadline: it never will be (message ${shortAddress(outcome.messageHash)}).`;
  }
}

/** The L2 outcome of an executed proposal, followed until the L2 has run it (a relay takes seconds on the devnet, minutes live). */
function useL2Outcome(addresses: GovernanceAddresses, proposal: ProposalStatus) {
  const clients = usePublicClients();
  const { chains } = useAppSettings();
  return useQuery({
    queryKey: ["governance", "l2-outcome", chains.l1.id, addresses.governor, proposal.id.toString()],
    enabled: proposal.state === "Executed",
    // Final outcomes are not read again.
    refetchInterval: (query) =>
      ["executed", "expired", "no message"].includes(query.state.data?.kind ?? "") ? false : PROPOSALS_REFRESH_MS,
    queryFn: () => readL2Outcome(clients, addresses, proposal),
  });
}

import { useState } from "react";
import type { Address } from "viem";
import { useConfig, useConnection, useReadContracts } from "wagmi";

import { useAppSettings } from "../../app-context";
import { TxButton } from "../../components/TxButton";
import { protocolGovernorAbi } from "../../generated/abis";
import { describeError } from "../../lib/errors";
import { formatDuration, formatTime } from "../../lib/format";
import { simulateAndWrite } from "../../lib/transactions";
import { governorCallAbi, type GovernanceAddresses } from "./addresses";
import { tooLateForL2, voteStillOpen, type ProposalStatus } from "./proposal-status";
import { SUPPORT } from "@avn/protocol/constants";
import { formatVotes, type VoteChoice } from "@avn/protocol/governance/rules";

/** The steps a proposal's state allows now: vote (Active), queue (Succeeded), execute (Queued). Other states have none. */
export function ProposalActions({ addresses, proposal }: { addresses: GovernanceAddresses; proposal: ProposalStatus }) {
  switch (proposal.state) {
    case "Active":
      return <VoteButtons addresses={addresses} proposal={proposal} />;
    case "Succeeded":
      return <QueueButton addresses={addresses} proposal={proposal} />;
    case "Queued":
      return <ExecuteButton addresses={addresses} proposal={proposal} />;
    default:
      return null;
  }
}

const CHOICES: Array<{ choice: VoteChoice; label: string }> = [
  { choice: "for", label: "Vote for" },
  { choice: "against", label: "Vote against" },
  { choice: "abstain", label: "Abstain" },
];

/**
 * For, against or abstain, with an optional reason, cast with the wallet's votes at the proposal's snapshot.
 * Disabled, with the reason said once for the three, when the wallet has already voted or had no votes then.
 */
function VoteButtons({ addresses, proposal }: { addresses: GovernanceAddresses; proposal: ProposalStatus }) {
  const { chains } = useAppSettings();
  const wagmiConfig = useConfig();
  const { address: account } = useConnection();
  const [reason, setReason] = useState("");
  const ballot = useBallot(addresses, proposal, account);
  const reasonId = `vote-reason-${proposal.id}`;
  if (account === undefined) return null;

  let blocker: string | undefined;
  if (!voteStillOpen(proposal))
    blocker = `Voting closes with block ${proposal.deadlineBlock}, the latest: a vote sent now would come too late.`;
  else if (ballot.data === undefined)
    blocker = ballot.error === null ? "Reading your votes at the snapshot…" : `Could not read your votes: ${describeError(ballot.error)}`;
  else if (ballot.data.voted) blocker = "You have already voted on this proposal.";
  else if (ballot.data.weight === 0n) {
    blocker = `${account} had no votes at the proposal's snapshot (block ${proposal.snapshotBlock}): votes count only if delegated before it.`;
  }
  return (
    <div className="vote" role="group" aria-label={`Vote on proposal ${proposal.id}`}>
      {ballot.data !== undefined && !ballot.data.voted && ballot.data.weight > 0n && (
        <p data-testid="vote-weight">
          You vote with {formatVotes(ballot.data.weight)} votes (held at block {proposal.snapshotBlock.toString()}).
        </p>
      )}
      <div className="field">
        <label htmlFor={reasonId}>Reason (optional)</label>
        <input
          id={reasonId}
          value={reason}
          onChange={(event) => setReason(event.target.value)}
          autoComplete="off"
          disabled={blocker !== undefined}
        />
      </div>
      <div className="actions">
        {CHOICES.map(({ choice, label }) => (
          <TxButton
            key={choice}
            chainId={chains.l1.id}
            variant={choice === "for" ? "primary" : "secondary"}
            disabled={blocker !== undefined}
            send={() =>
              simulateAndWrite(wagmiConfig, {
                address: addresses.governor,
                abi: governorCallAbi,
                functionName: "castVoteWithReason",
                args: [proposal.id, SUPPORT[choice], reason],
                chainId: chains.l1.id,
              })
            }
          >
            {label}
          </TxButton>
        ))}
      </div>
      {blocker !== undefined && (
        <p className="hint" data-testid="vote-blocker">
          {blocker}
        </p>
      )}
    </div>
  );
}

/** Whether `account` has voted on `proposal`, and the votes it held at the snapshot (what a vote weighs). */
function useBallot(addresses: GovernanceAddresses, proposal: ProposalStatus, account: Address | undefined) {
  const { chains } = useAppSettings();
  const governor = { address: addresses.governor, abi: protocolGovernorAbi, chainId: chains.l1.id } as const;
  const reads = useReadContracts({
    allowFailure: false,
    contracts: [
      { ...governor, functionName: "hasVoted", args: [proposal.id, account!] },
      { ...governor, functionName: "getVotes", args: [account!, proposal.snapshotBlock] },
    ],
    query: { enabled: account !== undefined },
  });
  return { data: reads.data === undefined ? undefined : { voted: reads.data[0], weight: reads.data[1] }, error: reads.error };
}

function QueueButton({ addresses, proposal }: { addresses: GovernanceAddresses; proposal: ProposalStatus }) {
  const { chains } = useAppSettings();
  const wagmiConfig = useConfig();
  return (
    <TxButton
      chainId={chains.l1.id}
      send={() =>
        simulateAndWrite(wagmiConfig, {
          address: addresses.governor,
          abi: governorCallAbi,
          functionName: "queue",
          args: [proposal.id],
          chainId: chains.l1.id,
        })
      }
    >
      Queue
    </TxButton>
  );
}

/** Execute, once the timelock has released the proposal (timed by the L1's latest block, as the timelock times it). */
function ExecuteButton({ addresses, proposal }: { addresses: GovernanceAddresses; proposal: ProposalStatus }) {
  const { chains } = useAppSettings();
  const wagmiConfig = useConfig();
  const eta = proposal.eta ?? 0n;
  // The actions' ETH travels with the execution (the timelock passes it on to the L1 messenger).
  const value = proposal.values.reduce((sum, each) => sum + each, 0n);
  // Executing a batch its deadline would refuse on L2 only spends gas and sends a message that can never run.
  const late = tooLateForL2(proposal);
  return (
    <TxButton
      chainId={chains.l1.id}
      disabled={eta > proposal.time || late !== undefined}
      disabledReason={late ?? `The timelock releases it in ${formatDuration(eta - proposal.time)} (at ${formatTime(eta)}, L1 time).`}
      send={() =>
        simulateAndWrite(wagmiConfig, {
          address: addresses.governor,
          abi: governorCallAbi,
          functionName: "execute",
          args: [proposal.id],
          value,
          chainId: chains.l1.id,
        })
      }
    >
      Execute
    </TxButton>
  );
}

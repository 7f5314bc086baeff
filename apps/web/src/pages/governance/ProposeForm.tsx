import { useState } from "react";
import { parseEventLogs } from "viem";
import { useConfig, useConnection } from "wagmi";

import { useAppSettings } from "../../app-context";
import { TxButton } from "../../components/TxButton";
import { protocolGovernorAbi } from "../../generated/abis";
import { describeError } from "../../lib/errors";
import { describeL2Call, l2CallsOf } from "@avn/protocol/governance/proposal";
import { proposalDescription } from "@avn/protocol/governance/rules";
import { simulateAndWrite } from "../../lib/transactions";
import { governorCallAbi, type GovernanceAddresses } from "./addresses";
import { proposalOf, readProposalTiming } from "./build-proposal";
import { CHANGE_KINDS, readDrafts, type ChangeDraft, type ChangeKind } from "./change-drafts";
import { ChangeFields } from "./ChangeFields";
import { usePublicClients } from "./usePublicClients";
import { useL2Rules } from "./useL2Rules";
import type { VotingPower } from "./useVotingPower";
import { formatVotes } from "@avn/protocol/governance/rules";

/**
 * Proposes one L2 batch of changes with an optional note. Each change is checked against the L2 contract
 * that will make it (its bounds, its admin handover), and proposing needs the governor's threshold of votes:
 * below it, the button says so instead of sending a transaction the governor would refuse.
 */
export function ProposeForm({ addresses, power }: { addresses: GovernanceAddresses; power: VotingPower | undefined }) {
  const { config, chains } = useAppSettings();
  const wagmiConfig = useConfig();
  const clients = usePublicClients();
  const { status: connection, address: account } = useConnection();
  const { rules, error: rulesError } = useL2Rules(addresses);
  const [drafts, setDrafts] = useState<ChangeDraft[]>([{ key: 0, kind: "set-quorum", text: "" }]);
  const [nextKey, setNextKey] = useState(1);
  const [note, setNote] = useState("");
  const [made, setMade] = useState("");
  const { changes, problems, blocker: draftBlocker } = readDrafts(drafts, rules);

  // Without a wallet, the button itself says to connect one.
  const blocker = (connection === "connected" ? belowThreshold(power) : undefined) ?? draftBlocker;

  const update = (key: number, draft: ChangeDraft) => setDrafts((all) => all.map((other) => (other.key === key ? draft : other)));
  const add = () => {
    // A kind not in the proposal yet: the same change twice is refused.
    const unused = (Object.keys(CHANGE_KINDS) as ChangeKind[]).find((kind) => !drafts.some((draft) => draft.kind === kind)) ?? "set-quorum";
    setDrafts((all) => [...all, { key: nextKey, kind: unused, text: "" }]);
    setNextKey((key) => key + 1);
  };

  return (
    <section className="panel" aria-labelledby="propose-heading">
      <h2 id="propose-heading">Propose</h2>
      <p className="hint">
        A proposal changes the L2 protocol: once it passes the vote and waits out the timelock on L1, its changes travel to L2 as one batch,
        which the governance executor runs. Proposing needs{" "}
        <span data-testid="proposal-threshold">{power === undefined ? "the governor's threshold of" : formatVotes(power.threshold)}</span>{" "}
        votes.
      </p>
      {rulesError !== null && rules === undefined && (
        <p className="error" role="alert">
          Could not read the L2 contracts: {describeError(rulesError)}
        </p>
      )}
      {drafts.map((draft, index) => (
        <ChangeFields
          key={draft.key}
          draft={draft}
          position={index + 1}
          rules={rules}
          problem={problems.get(draft.key)}
          onChange={(changed) => update(draft.key, changed)}
          onRemove={() => setDrafts((all) => all.filter((other) => other.key !== draft.key))}
        />
      ))}
      <button type="button" className="secondary" onClick={add}>
        Add a change
      </button>
      <div className="field">
        <label htmlFor="proposal-note">Note (optional)</label>
        <input
          id="proposal-note"
          value={note}
          onChange={(event) => setNote(event.target.value)}
          autoComplete="off"
          aria-describedby="proposal-note-hint"
        />
        <p className="hint" id="proposal-note-hint">
          The proposal's first line, where voters see it; without one it reads "L2 protocol change".
        </p>
      </div>
      {changes.length > 0 && draftBlocker === undefined && (
        <div data-testid="proposal-preview">
          <h3>What you will propose</h3>
          <dl className="facts">
            <dt>Description</dt>
            <dd>
              <pre className="description">{account === undefined ? "" : proposalDescription(changes, note, account)}</pre>
            </dd>
            <dt>Calls on L2</dt>
            <dd>
              <ul className="calls">
                {changes
                  .flatMap((change) => l2CallsOf(change, addresses.l2))
                  .map((call, index) => (
                    <li key={index}>
                      <code>{describeL2Call(call, addresses.l2)}</code>
                    </li>
                  ))}
              </ul>
            </dd>
            <dt>Sent by</dt>
            <dd>
              the timelock, through the L1 messenger, to the executor {addresses.executor} on {chains.l2.name}
            </dd>
          </dl>
        </div>
      )}
      <TxButton
        chainId={chains.l1.id}
        disabled={blocker !== undefined}
        disabledReason={blocker}
        onMined={(receipt) => {
          const [created] = parseEventLogs({ abi: protocolGovernorAbi, eventName: "ProposalCreated", logs: receipt.logs });
          setMade(
            created === undefined
              ? "Proposal made."
              : `Proposal ${created.args.proposalId} made: voting starts after block ${created.args.voteStart}.`,
          );
          setDrafts([]);
          setNote("");
        }}
        send={async () => {
          setMade("");
          // The L2 deadline counts from now: read when sending, not when the form was filled in.
          if (account === undefined) throw new Error("Connect a wallet to propose");
          const timing = await readProposalTiming(clients, addresses);
          const proposal = proposalOf({ changes, note, proposer: account, addresses, timing, l1BlockSeconds: config.l1.blockSeconds });
          return simulateAndWrite(wagmiConfig, {
            address: addresses.governor,
            abi: governorCallAbi,
            functionName: "propose",
            args: [proposal.targets, proposal.values, proposal.calldatas, proposal.description],
            chainId: chains.l1.id,
          });
        }}
      >
        Propose
      </TxButton>
      <p className="success" role="status" data-testid="proposal-made">
        {made}
      </p>
    </section>
  );
}

/** Why the connected wallet cannot propose yet, if it cannot: the governor refuses a proposer below its threshold. */
function belowThreshold(power: VotingPower | undefined): string | undefined {
  if (power === undefined) return "Reading your votes…";
  if (power.votes >= power.threshold) {
    if (power.proposingVotes === undefined) return "Reading your votes…";
    if (power.proposingVotes >= power.threshold) return undefined;
    return "Your votes count for proposing from the block after they were delegated: a few seconds.";
  }
  return `Proposing needs ${formatVotes(power.threshold)} votes; you have ${formatVotes(power.votes)} (tokens vote once delegated: see Your votes).`;
}

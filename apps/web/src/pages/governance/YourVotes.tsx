import { useState } from "react";
import { zeroAddress, type Address } from "viem";
import { useConfig } from "wagmi";

import { HexLink } from "../../components/ExplorerLink";
import { useAppSettings } from "../../app-context";
import { AddressField } from "../../components/AddressField";
import { TxButton } from "../../components/TxButton";
import { primaryTokenAbi } from "../../generated/abis";
import { parseAddressInput } from "../../lib/addresses";
import { describeError } from "../../lib/errors";
import { simulateAndWrite } from "../../lib/transactions";
import type { GovernanceAddresses } from "./addresses";
import type { VotingPower } from "./useVotingPower";
import { formatVotes } from "@avn/protocol/governance/rules";

/** The connected wallet's L1 tokens, votes and delegate, and the delegation that turns tokens into votes. */
export function YourVotes({
  addresses,
  account,
  power,
  error,
}: {
  addresses: GovernanceAddresses;
  account: Address | undefined;
  power: VotingPower | undefined;
  error: Error | null;
}) {
  let body;
  if (account === undefined) body = null;
  else if (power === undefined)
    body =
      error === null ? (
        <p role="status">Loading your votes…</p>
      ) : (
        <p className="error">Could not read your votes: {describeError(error)}</p>
      );
  else
    body = (
      <>
        <dl className="facts">
          <dt>Primary tokens on L1</dt>
          <dd data-testid="l1-token-balance">{formatVotes(power.balance)}</dd>
          <dt>Your votes now</dt>
          <dd data-testid="current-votes">{formatVotes(power.votes)}</dd>
          <dt>Your tokens vote through</dt>
          <dd data-testid="delegatee">
            {power.delegatee === zeroAddress ? (
              "No one yet: delegate to vote"
            ) : power.delegatee === account ? (
              "Yourself"
            ) : (
              <HexLink chain="l1" kind="address" value={power.delegatee} full />
            )}
          </dd>
        </dl>
        <DelegateToSelf addresses={addresses} account={account} power={power} />
        <DelegateToOther addresses={addresses} account={account} />
      </>
    );
  return (
    <section className="panel" aria-labelledby="votes-heading">
      <h2 id="votes-heading">Your votes</h2>
      <p className="hint">
        Primary tokens on L1 vote only once delegated, to yourself or to someone you trust; the tokens stay in your wallet. A proposal
        counts the votes held at its snapshot block, so delegate before a proposal is made.
      </p>
      {body}
    </section>
  );
}

function DelegateToSelf({ addresses, account, power }: { addresses: GovernanceAddresses; account: Address; power: VotingPower }) {
  const { chains } = useAppSettings();
  const wagmiConfig = useConfig();
  const already = power.delegatee === account;
  return (
    <TxButton
      chainId={chains.l1.id}
      disabled={already}
      disabledReason="Your tokens already vote through you."
      send={() =>
        simulateAndWrite(wagmiConfig, {
          address: addresses.token,
          abi: primaryTokenAbi,
          functionName: "delegate",
          args: [account],
          chainId: chains.l1.id,
        })
      }
    >
      Delegate to myself
    </TxButton>
  );
}

function DelegateToOther({ addresses, account }: { addresses: GovernanceAddresses; account: Address }) {
  const { chains } = useAppSettings();
  const wagmiConfig = useConfig();
  const [input, setInput] = useState("");
  const { address: delegatee, problem } = parseAddressInput(input);
  const blocker =
    delegatee === undefined
      ? "Enter the address to delegate to."
      : delegatee === zeroAddress
        ? "Delegating to the zero address would take your votes away: delegate to an account."
        : delegatee === account
          ? "That is your own address: use Delegate to myself."
          : undefined;
  return (
    <AddressField
      id="delegate-to"
      label="Or delegate to another address"
      hint="That account votes with your tokens' weight until you delegate elsewhere."
      value={input}
      onChange={setInput}
      problem={problem}
    >
      <TxButton
        chainId={chains.l1.id}
        variant="secondary"
        disabled={blocker !== undefined}
        disabledReason={blocker}
        onMined={() => setInput("")}
        send={() =>
          simulateAndWrite(wagmiConfig, {
            address: addresses.token,
            abi: primaryTokenAbi,
            functionName: "delegate",
            args: [delegatee!],
            chainId: chains.l1.id,
          })
        }
      >
        Delegate
      </TxButton>
    </AddressField>
  );
}

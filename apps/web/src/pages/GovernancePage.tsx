import { useConnection } from "wagmi";

import { useAppSettings } from "../app-context";
import { ChainNotice } from "../components/ChainNotice";
import { WalletRequired } from "../components/WalletRequired";
import { governanceAddresses, type GovernanceAddresses } from "./governance/addresses";
import { ProposalList } from "./governance/ProposalList";
import { ProposeForm } from "./governance/ProposeForm";
import { useVotingPower } from "./governance/useVotingPower";
import { YourVotes } from "./governance/YourVotes";

/**
 * The protocol's governance: token holders delegate their L1 votes, propose changes to the L2 protocol,
 * vote, queue and execute on L1; everyone follows each proposal to its effect on L2. Writes go to L1;
 * the L2 is read for the outcome and for the present values a change replaces.
 */
export default function GovernancePage() {
  const settings = useAppSettings();
  const addresses = governanceAddresses(settings);
  return (
    <section>
      <ChainNotice expected="l1" />
      <WalletRequired>Connect a wallet to delegate your votes, to propose changes and to vote.</WalletRequired>
      {addresses === undefined ? (
        <p className="error" role="alert">
          This deployment's configuration names no governance contracts (Governor, Timelock, L1CrossDomainMessenger, GovernanceExecutor), or
          not the RewardPools contract that governance administers with the other L2 contracts.
        </p>
      ) : (
        <Governance addresses={addresses} />
      )}
    </section>
  );
}

function Governance({ addresses }: { addresses: GovernanceAddresses }) {
  const { address: account } = useConnection();
  const { power, error } = useVotingPower(addresses, account);
  return (
    <>
      <YourVotes addresses={addresses} account={account} power={power} error={error} />
      <ProposeForm addresses={addresses} power={power} />
      <ProposalList addresses={addresses} />
    </>
  );
}

import { useState } from "react";

import { describeError } from "../../lib/errors";
import type { GovernanceAddresses } from "./addresses";
import { ProposalCard } from "./ProposalCard";
import { useDescriptions, useProposals } from "./useProposals";

/** Proposals shown at first, and added by each "Show older proposals". */
const PAGE = 10;

/** Every proposal, newest first, a page at a time, each with its state, tally, next step and the actions valid now. */
export function ProposalList({ addresses }: { addresses: GovernanceAddresses }) {
  const [limit, setLimit] = useState(PAGE);
  const list = useProposals(addresses, limit);
  const descriptions = useDescriptions(addresses, list.data?.total);

  let body;
  if (list.data === undefined) {
    body = list.isError ? (
      <p className="error" role="alert">
        Could not read the proposals: {describeError(list.error)}
      </p>
    ) : (
      <p role="status">Loading the proposals…</p>
    );
  } else if (list.data.total === 0n) {
    body = <p>No proposal yet.</p>;
  } else {
    const { total, proposals } = list.data;
    body = (
      <>
        {/* A failed refresh keeps the last list on screen, and says it is not current. */}
        {list.isError && (
          <p className="error" role="alert">
            Could not refresh the proposals: {describeError(list.error)}
          </p>
        )}
        {descriptions.isError && <p className="error">Could not read the proposals' descriptions: {describeError(descriptions.error)}</p>}
        {proposals.map((proposal) => (
          <ProposalCard
            key={proposal.id.toString()}
            addresses={addresses}
            proposal={proposal}
            description={descriptions.data?.get(proposal.id.toString())}
          />
        ))}
        {BigInt(proposals.length) < total && (
          <button type="button" className="secondary" onClick={() => setLimit((shown) => shown + PAGE)}>
            Show older proposals ({(total - BigInt(proposals.length)).toString()} more)
          </button>
        )}
      </>
    );
  }
  return (
    <section aria-labelledby="proposals-heading">
      <h2 id="proposals-heading">Proposals</h2>
      {body}
    </section>
  );
}

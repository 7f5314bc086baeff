import { useCallback, useState } from "react";

import { ClaimsSection } from "./network/ClaimsSection";
import { useEventClient } from "./network/client";
import { JobsSection } from "./network/JobsSection";
import { NodesSection } from "./network/NodesSection";
import { ProtocolFacts } from "./network/ProtocolFacts";

/**
 * The network dashboard: nodes, their liveness and quality of service, protocol parameters, live jobs, and
 * the wallet's earnings and its licenses' scores.
 */
export default function NetworkPage() {
  const { client, live } = useEventClient();
  // The sections below the nodes and their quality of service come once those are on screen, rather than
  // first and then moved down by the tables above them as they fill (a phone's screen holds little more).
  const [nodesShown, setNodesShown] = useState(false);
  const showRest = useCallback(() => setNodesShown(true), []);
  return (
    <section>
      <NodesSection client={client} onShown={showRest} />
      {nodesShown && (
        <>
          <ProtocolFacts />
          <JobsSection client={client} live={live} />
          <ClaimsSection client={client} />
        </>
      )}
    </section>
  );
}

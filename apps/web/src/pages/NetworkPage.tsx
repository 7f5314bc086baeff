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
  return (
    <section>
      <NodesSection client={client} />
      <ProtocolFacts />
      <JobsSection client={client} live={live} />
      <ClaimsSection client={client} />
    </section>
  );
}

import { ClaimsSection } from "./network/ClaimsSection";
import { useEventClient } from "./network/client";
import { JobsSection } from "./network/JobsSection";
import { NodesSection } from "./network/NodesSection";
import { ProtocolFacts } from "./network/ProtocolFacts";

/** The network dashboard: nodes and their liveness, protocol parameters, live jobs, and the wallet's earnings. */
export default function NetworkPage() {
  const { client, live } = useEventClient();
  return (
    <section>
      <h1>Network</h1>
      <NodesSection />
      <ProtocolFacts />
      <JobsSection client={client} live={live} />
      <ClaimsSection client={client} />
    </section>
  );
}

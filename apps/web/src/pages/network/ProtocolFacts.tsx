import { useReadContracts } from "wagmi";

import { useAppSettings } from "../../app-context";
import { nodeRegistryAbi, verificationRegistryAbi } from "../../generated/abis";
import { describeError } from "../../lib/errors";
import { formatAmount, formatDuration } from "../../lib/format";

/** The parameters new jobs get (governance can change them) and the reward epoch now. */
export function ProtocolFacts() {
  const { config, chains } = useAppSettings();
  const verification = { address: config.contracts.l2.VerificationRegistry, abi: verificationRegistryAbi, chainId: chains.l2.id } as const;
  const nodes = { address: config.contracts.l2.NodeRegistry, abi: nodeRegistryAbi, chainId: chains.l2.id } as const;
  const facts = useReadContracts({
    allowFailure: false,
    contracts: [
      { ...nodes, functionName: "quorum" },
      { ...verification, functionName: "requestFee" },
      { ...verification, functionName: "jobTimeout" },
      { ...verification, functionName: "currentEpoch" },
      { ...verification, functionName: "nextJobId" },
      { ...nodes, functionName: "livenessWindow" },
    ],
    // The epoch turns and governance may change a parameter while the page is open.
    query: { refetchInterval: 10_000 },
  });

  return (
    <section aria-labelledby="facts-heading" className="panel">
      <h2 id="facts-heading">Protocol</h2>
      {facts.error !== null && (
        <p className="error" role="alert">
          Could not read the protocol parameters: {describeError(facts.error)}
        </p>
      )}
      {facts.data === undefined ? (
        facts.error === null && <p role="status">Loading…</p>
      ) : (
        <dl className="facts">
          <dt>Quorum</dt>
          <dd data-testid="quorum">{facts.data[0].toString()} agreeing licenses</dd>
          <dt>Request fee</dt>
          <dd data-testid="request-fee">{formatAmount(facts.data[1])} staked tokens</dd>
          <dt>Job timeout</dt>
          <dd data-testid="job-timeout">{formatDuration(facts.data[2])}</dd>
          <dt>Current epoch</dt>
          <dd data-testid="current-epoch">{facts.data[3].toString()}</dd>
          <dt>Jobs requested</dt>
          {/* Job ids start at 1, so nextJobId - 1 jobs exist. */}
          <dd>{(facts.data[4] - 1n).toString()}</dd>
          <dt>Liveness window</dt>
          <dd>{formatDuration(facts.data[5])} after a node's last heartbeat</dd>
        </dl>
      )}
    </section>
  );
}

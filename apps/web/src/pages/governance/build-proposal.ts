import type { Address, PublicClient } from "viem";

import { protocolGovernorAbi, protocolTimelockAbi } from "../../generated/abis";
import { buildProposal, type ProposalTiming } from "@avn/protocol/governance/rules";
import { type L1Proposal, type ProtocolChange } from "@avn/protocol/governance/proposal";
import type { GovernanceAddresses } from "./addresses";

/** The governor's and the timelock's delays, and the later of the L1's and the L2's times now. */
export async function readProposalTiming(
  clients: { l1: PublicClient; l2: PublicClient },
  addresses: GovernanceAddresses,
): Promise<ProposalTiming> {
  const governor = { address: addresses.governor, abi: protocolGovernorAbi } as const;
  const [votingDelay, votingPeriod, timelockDelay, l1Latest, l2Latest] = await Promise.all([
    clients.l1.readContract({ ...governor, functionName: "votingDelay" }),
    clients.l1.readContract({ ...governor, functionName: "votingPeriod" }),
    clients.l1.readContract({ address: addresses.timelock, abi: protocolTimelockAbi, functionName: "getMinDelay" }),
    clients.l1.getBlock({ blockTag: "latest" }),
    clients.l2.getBlock({ blockTag: "latest" }),
  ]);
  const now = l1Latest.timestamp > l2Latest.timestamp ? l1Latest.timestamp : l2Latest.timestamp;
  return { votingDelay, votingPeriod, timelockDelay, now };
}

/** The Governor proposal of `changes` by `proposer`, by the rules the CLI follows (`buildProposal`). */
export function proposalOf(input: {
  changes: readonly ProtocolChange[];
  note: string | undefined;
  proposer: Address;
  addresses: GovernanceAddresses;
  timing: ProposalTiming;
  l1BlockSeconds: number;
}): L1Proposal {
  const { addresses } = input;
  return buildProposal({
    changes: input.changes,
    note: input.note,
    proposer: input.proposer,
    timing: input.timing,
    l1BlockSeconds: input.l1BlockSeconds,
    l1Messenger: addresses.l1Messenger,
    executor: addresses.executor,
    l2: addresses.l2,
  });
}

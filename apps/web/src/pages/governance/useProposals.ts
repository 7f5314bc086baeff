import { keepPreviousData, useQuery } from "@tanstack/react-query";
import type { PublicClient } from "viem";

import { useAppSettings } from "../../app-context";
import { protocolGovernorAbi } from "../../generated/abis";
import { l2CallsOfProposal } from "@avn/protocol/governance/proposal";
import type { GovernanceAddresses } from "./addresses";
import type { ProposalStatus } from "./proposal-status";
import { usePublicClients } from "./usePublicClients";
import { PROPOSAL_STATES } from "@avn/protocol/constants";

/** The L1 moves on by itself (a block every few seconds): states, blocks left and time left follow it. */
export const PROPOSALS_REFRESH_MS = 3_000;

/**
 * The newest `limit` proposals (newest first) and how many there are, every value read at one L1 block so
 * that states, blocks and times agree. The governor stores its proposals (GovernorStorage), so listing them
 * needs no log scan; only their descriptions live in events (`useDescriptions`).
 */
export function useProposals(addresses: GovernanceAddresses, limit: number) {
  const { l1 } = usePublicClients();
  const { chains } = useAppSettings();
  return useQuery({
    queryKey: ["governance", "proposals", chains.l1.id, addresses.governor, limit],
    refetchInterval: PROPOSALS_REFRESH_MS,
    // Showing more keeps the shorter list on screen while the longer one loads.
    placeholderData: keepPreviousData,
    queryFn: () => readProposals(l1, addresses, limit),
  });
}

async function readProposals(
  l1: PublicClient,
  addresses: GovernanceAddresses,
  limit: number,
): Promise<{ total: bigint; proposals: ProposalStatus[] }> {
  const latest = await l1.getBlock({ blockTag: "latest" });
  const governor = { address: addresses.governor, abi: protocolGovernorAbi, blockNumber: latest.number } as const;
  const total = await l1.readContract({ ...governor, functionName: "proposalCount" });
  const indices: bigint[] = [];
  for (let index = total - 1n; index >= 0n && indices.length < limit; index -= 1n) indices.push(index);
  const proposals = await Promise.all(
    indices.map(async (index): Promise<ProposalStatus> => {
      const [id, targets, values, calldatas, descriptionHash] = await l1.readContract({
        ...governor,
        functionName: "proposalDetailsAt",
        args: [index],
      });
      const [state, snapshotBlock, deadlineBlock, [against, inFavour, abstain], proposer, eta] = await Promise.all([
        l1.readContract({ ...governor, functionName: "state", args: [id] }),
        l1.readContract({ ...governor, functionName: "proposalSnapshot", args: [id] }),
        l1.readContract({ ...governor, functionName: "proposalDeadline", args: [id] }),
        l1.readContract({ ...governor, functionName: "proposalVotes", args: [id] }),
        l1.readContract({ ...governor, functionName: "proposalProposer", args: [id] }),
        l1.readContract({ ...governor, functionName: "proposalEta", args: [id] }),
      ]);
      // The supply at a snapshot is known once the snapshot block is past (the token refuses a future lookup).
      const quorum =
        snapshotBlock < latest.number ? await l1.readContract({ ...governor, functionName: "quorum", args: [snapshotBlock] }) : undefined;
      return {
        id,
        state: PROPOSAL_STATES[state],
        proposer,
        targets,
        values,
        calldatas,
        descriptionHash,
        batch: l2CallsOfProposal(calldatas),
        votes: { for: inFavour, against, abstain },
        quorum,
        snapshotBlock,
        deadlineBlock,
        eta: eta === 0n ? undefined : eta,
        block: latest.number,
        time: latest.timestamp,
      };
    }),
  );
  return { total, proposals };
}

/**
 * Every proposal's description, from the governor's `ProposalCreated` events since the deployment's first
 * block (the governor stores only its hash). Read again only when the number of proposals changes.
 */
export function useDescriptions(addresses: GovernanceAddresses, total: bigint | undefined) {
  const { l1 } = usePublicClients();
  const { config, chains } = useAppSettings();
  return useQuery({
    queryKey: ["governance", "descriptions", chains.l1.id, addresses.governor, total?.toString()],
    enabled: total !== undefined && total > 0n,
    staleTime: Infinity,
    placeholderData: keepPreviousData,
    queryFn: async (): Promise<Map<string, string>> => {
      const logs = await l1.getContractEvents({
        address: addresses.governor,
        abi: protocolGovernorAbi,
        eventName: "ProposalCreated",
        fromBlock: BigInt(config.l1.fromBlock),
        toBlock: "latest",
      });
      return new Map(logs.map((log) => [log.args.proposalId!.toString(), log.args.description!]));
    },
  });
}

import type { Address } from "viem";
import { useBlockNumber, useReadContract, useReadContracts } from "wagmi";

import { useAppSettings } from "../../app-context";
import { primaryTokenAbi, protocolGovernorAbi } from "../../generated/abis";
import type { GovernanceAddresses } from "./addresses";

export interface VotingPower {
  /** Primary tokens on L1. */
  balance: bigint;
  /** Votes now (delegated to the account, by itself or others). */
  votes: bigint;
  /**
   * Votes as a proposal made now counts them: at the block before the latest (the governor reads the
   * proposer's votes one block back), so votes delegated in the latest block do not count yet.
   */
  proposingVotes: bigint | undefined;
  /** Whom the account's tokens vote through (zero: no one yet). */
  delegatee: Address;
  /** Votes needed to propose. */
  threshold: bigint;
}

/** The connected account's L1 token balance, votes, delegate, and the governor's proposal threshold. */
export function useVotingPower(
  addresses: GovernanceAddresses,
  account: Address | undefined,
): { power: VotingPower | undefined; error: Error | null } {
  const { chains } = useAppSettings();
  const token = { address: addresses.token, abi: primaryTokenAbi, chainId: chains.l1.id } as const;
  const reads = useReadContracts({
    allowFailure: false,
    contracts: [
      { ...token, functionName: "balanceOf", args: [account!] },
      { ...token, functionName: "getVotes", args: [account!] },
      { ...token, functionName: "delegates", args: [account!] },
      { address: addresses.governor, abi: protocolGovernorAbi, chainId: chains.l1.id, functionName: "proposalThreshold" },
    ],
    // Others may delegate to the account; transfers move votes.
    query: { enabled: account !== undefined, refetchInterval: 5_000 },
  });
  const latest = useBlockNumber({ chainId: chains.l1.id, watch: true });
  const past = useReadContract({
    ...token,
    functionName: "getPastVotes",
    args: [account!, (latest.data ?? 1n) - 1n],
    query: { enabled: account !== undefined && latest.data !== undefined && latest.data > 0n },
  });
  if (account === undefined || reads.data === undefined) return { power: undefined, error: reads.error };
  const [balance, votes, delegatee, threshold] = reads.data;
  return { power: { balance, votes, proposingVotes: past.data, delegatee, threshold }, error: reads.error };
}

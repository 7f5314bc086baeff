import type { Address } from "viem";
import { useReadContracts } from "wagmi";

import { useAppSettings } from "../../app-context";
import { nodeLicenseAbi, nodeRegistryAbi, rewardPoolsAbi, stakedTokenAbi, verificationRegistryAbi } from "../../generated/abis";
import type { GovernanceAddresses } from "./addresses";
import type { L2Rules } from "./change-drafts";

/** The L2 protocol's present values, its setters' bounds and its admins, against which a proposal's changes are checked. */
export function useL2Rules(addresses: GovernanceAddresses): { rules: L2Rules | undefined; error: Error | null } {
  const { chains } = useAppSettings();
  const chainId = chains.l2.id;
  const registry = { address: addresses.l2.NodeRegistry, abi: nodeRegistryAbi, chainId } as const;
  const verification = { address: addresses.l2.VerificationRegistry, abi: verificationRegistryAbi, chainId } as const;
  const staked = { address: addresses.l2.StakedToken, abi: stakedTokenAbi, chainId } as const;
  const license = { address: addresses.l2.NodeLicense, abi: nodeLicenseAbi, chainId } as const;
  const rewardPools = { address: addresses.l2.RewardPools, abi: rewardPoolsAbi, chainId } as const;
  const reads = useReadContracts({
    allowFailure: false,
    contracts: [
      { ...registry, functionName: "quorum" },
      { ...registry, functionName: "MAX_QUORUM" },
      { ...verification, functionName: "requestFee" },
      { ...verification, functionName: "jobTimeout" },
      { ...verification, functionName: "MIN_JOB_TIMEOUT" },
      { ...verification, functionName: "MAX_JOB_TIMEOUT" },
      { ...registry, functionName: "livenessWindow" },
      { ...registry, functionName: "MAX_LIVENESS_WINDOW" },
      { ...staked, functionName: "defaultAdmin" },
      { ...staked, functionName: "pendingDefaultAdmin" },
      { ...license, functionName: "defaultAdmin" },
      { ...license, functionName: "pendingDefaultAdmin" },
      { ...registry, functionName: "defaultAdmin" },
      { ...registry, functionName: "pendingDefaultAdmin" },
      { ...verification, functionName: "defaultAdmin" },
      { ...verification, functionName: "pendingDefaultAdmin" },
      { ...rewardPools, functionName: "defaultAdmin" },
      { ...rewardPools, functionName: "pendingDefaultAdmin" },
    ],
    // A proposal executed while the page is open changes them.
    query: { refetchInterval: 10_000 },
  });
  if (reads.data === undefined) return { rules: undefined, error: reads.error };
  const [quorum, maxQuorum, requestFee, jobTimeout, minJobTimeout, maxJobTimeout, livenessWindow, maxLivenessWindow, ...admins] =
    reads.data;
  const admin = (index: number) => ({
    admin: admins[index * 2] as Address,
    pending: (admins[index * 2 + 1] as readonly [Address, number])[0],
  });
  return {
    rules: {
      quorum,
      maxQuorum,
      requestFee,
      jobTimeout,
      minJobTimeout,
      maxJobTimeout,
      livenessWindow,
      maxLivenessWindow,
      admins: {
        StakedToken: admin(0),
        NodeLicense: admin(1),
        NodeRegistry: admin(2),
        VerificationRegistry: admin(3),
        RewardPools: admin(4),
      },
      executor: addresses.executor,
    },
    error: reads.error,
  };
}

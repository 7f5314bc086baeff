import { keepPreviousData } from "@tanstack/react-query";
import type { Address } from "viem";
import { useReadContract, useReadContracts } from "wagmi";

import { useAppSettings } from "../app-context";
import { nodeLicenseAbi } from "../generated/abis";

/**
 * The license ids `owner` holds, in the order of the enumerable collection (`tokenOfOwnerByIndex`).
 * `undefined` while loading or without an owner.
 */
export function useOwnedLicenses(owner: Address | undefined): {
  licenseIds: bigint[] | undefined;
  isLoading: boolean;
  error: Error | null;
} {
  const { config, chains } = useAppSettings();
  const license = { address: config.contracts.l2.NodeLicense, abi: nodeLicenseAbi, chainId: chains.l2.id } as const;
  const balance = useReadContract({
    ...license,
    functionName: "balanceOf",
    args: owner === undefined ? undefined : [owner],
    query: { enabled: owner !== undefined, placeholderData: keepPreviousData },
  });
  const count = balance.data === undefined ? 0 : Number(balance.data);
  const ids = useReadContracts({
    contracts: Array.from(
      { length: count },
      (_, index) => ({ ...license, functionName: "tokenOfOwnerByIndex", args: [owner!, BigInt(index)] }) as const,
    ),
    allowFailure: false,
    // Keeps the last list while a changed one loads, so forms built on it stay mounted (and keep their
    // transaction's outcome on screen) when a license arrives or leaves.
    query: { enabled: owner !== undefined && count > 0, placeholderData: keepPreviousData },
  });
  if (owner === undefined) return { licenseIds: undefined, isLoading: false, error: null };
  if (balance.data === 0n) return { licenseIds: [], isLoading: false, error: null };
  return {
    licenseIds: ids.data === undefined ? undefined : [...ids.data].sort((a, b) => (a < b ? -1 : 1)),
    isLoading: balance.isLoading || ids.isLoading,
    error: balance.error ?? ids.error,
  };
}

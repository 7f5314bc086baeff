import { useQuery } from "@tanstack/react-query";
import { useMemo } from "react";
import type { PublicClient } from "viem";
import { usePublicClient } from "wagmi";

import { useAppSettings } from "../../app-context";
import { knownContracts, type ChainKey, type KnownContract } from "../../explorer/abis";
import { otsApiLevel } from "../../explorer/ots";

export interface Explorer {
  clients: Record<ChainKey, PublicClient>;
  known: KnownContract[];
  chainName: (chain: ChainKey) => string;
}

/** The explorer's clients of both chains (wagmi's, so reads share its transports and cache) and the known contracts. */
export function useExplorer(): Explorer {
  const { config, chains } = useAppSettings();
  const l1 = usePublicClient({ chainId: chains.l1.id });
  const l2 = usePublicClient({ chainId: chains.l2.id });
  // Both chains are in the wagmi config, so a missing client is a programming error, not a user's.
  if (l1 === undefined || l2 === undefined) throw new Error("The app's wagmi configuration lacks one of the chains.");
  const known = useMemo(() => knownContracts(config), [config]);
  return {
    clients: { l1: l1, l2: l2 },
    known,
    chainName: (chain) => (chain === "l1" ? config.l1.name : config.l2.name),
  };
}

/** Whether `chain`'s node serves the Otterscan namespace (asked once per page load). */
export function useOts(chain: ChainKey) {
  const { clients } = useExplorer();
  return useQuery({
    queryKey: ["explorer", "ots", chain],
    staleTime: Infinity,
    queryFn: async () => (await otsApiLevel(clients[chain])) ?? null,
  });
}

/** The route's `l1`/`l2`, or undefined for anything else. */
export function chainParam(value: string | undefined): ChainKey | undefined {
  return value === "l1" || value === "l2" ? value : undefined;
}

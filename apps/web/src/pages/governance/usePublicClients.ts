import type { PublicClient } from "viem";
import { useConfig } from "wagmi";
import { getPublicClient } from "wagmi/actions";

import { useAppSettings } from "../../app-context";

/** The wagmi public clients of the deployment's two chains, for reads wagmi's hooks do not make (logs, receipts, blocks). */
export function usePublicClients(): { l1: PublicClient; l2: PublicClient } {
  const wagmiConfig = useConfig();
  const { chains } = useAppSettings();
  const l1 = getPublicClient(wagmiConfig, { chainId: chains.l1.id });
  const l2 = getPublicClient(wagmiConfig, { chainId: chains.l2.id });
  // Both chains are in the wagmi config, so a missing client is a programming error, not a user's.
  if (l1 === undefined || l2 === undefined) throw new Error("The app's wagmi configuration lacks one of the chains.");
  return { l1: l1, l2: l2 };
}

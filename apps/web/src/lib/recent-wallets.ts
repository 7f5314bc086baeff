import type { Storage } from "wagmi";

/**
 * The key under which wagmi keeps the id of the connector that last connected (`recentConnectorId`, written by
 * its `connect` action when a connection succeeds and read by its `reconnect`). An EIP-6963 wallet's connector
 * id is the wallet's reverse-DNS name (`io.metamask`), so the app keeps no record of its own.
 */
export const RECENT_CONNECTOR_KEY = "recentConnectorId";

/** The id of the wallet that last connected in this browser, or null: read from wagmi's own storage. */
export async function recentConnectorId(storage: Pick<Storage, "getItem"> | null | undefined): Promise<string | null> {
  if (storage === null || storage === undefined) return null;
  try {
    const id: unknown = await storage.getItem(RECENT_CONNECTOR_KEY);
    return typeof id === "string" && id !== "" ? id : null;
  } catch {
    // A browser that refuses storage (a private window's quota, a blocked site) has no recent wallet.
    return null;
  }
}

/**
 * The wallets in the order the connect dialog lists them: the one last used first, then the others in the
 * order they announced themselves (EIP-6963), which is the order wagmi keeps them in.
 */
export function orderWallets<Wallet extends { id: string }>(wallets: readonly Wallet[], recentId: string | null): Wallet[] {
  const recent = recentId === null ? -1 : wallets.findIndex((wallet) => wallet.id === recentId);
  if (recent <= 0) return [...wallets];
  return [wallets[recent], ...wallets.slice(0, recent), ...wallets.slice(recent + 1)];
}

import { createConfig, fallback, http, webSocket, type Config } from "wagmi";

import type { AppChains } from "./config/chains";
import type { NetworkConfig } from "@avn/protocol/network-config";

/**
 * The wagmi configuration of one deployment. Wallets are found through EIP-6963 (wagmi's multi-injected
 * provider discovery, on by default), so MetaMask and other browser wallets appear by name; no
 * connector is listed by hand. Reads go to the deployment's own RPC URLs, not the wallet's.
 */
export function wagmiConfig(config: NetworkConfig, chains: AppChains): Config {
  const l2Transport =
    config.l2.wsUrl === undefined
      ? http(config.l2.rpcUrl, { batch: true })
      : fallback([http(config.l2.rpcUrl, { batch: true }), webSocket(config.l2.wsUrl)]);
  return createConfig({
    chains: [chains.l2, chains.l1],
    multiInjectedProviderDiscovery: true,
    connectors: [],
    transports: {
      [chains.l1.id]: http(config.l1.rpcUrl, { batch: true }),
      [chains.l2.id]: l2Transport,
    },
    // The devnet mines every second or two; a live L2 every two seconds.
    pollingInterval: 1_000,
  });
}

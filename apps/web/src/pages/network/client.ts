import { useMemo } from "react";
import { createPublicClient, fallback, http, webSocket, type PublicClient } from "viem";

import { useAppSettings } from "../../app-context";

/**
 * The page's own L2 client for event logs. wagmi's L2 transport puts HTTP first (reads batch better
 * there), which would make `watchContractEvent` poll; this one is WebSocket-only when the deployment has
 * a WebSocket URL, so new jobs and votes arrive as pushed subscriptions (viem subscribes when the first
 * transport of a fallback is a socket). Without one it polls over HTTP.
 */
export function useEventClient(): { client: PublicClient; live: boolean } {
  const { config, chains } = useAppSettings();
  return useMemo(() => {
    const wsUrl = config.l2.wsUrl;
    // HTTP behind the socket: reads still work if the socket does not connect.
    const transport = wsUrl === undefined ? http(config.l2.rpcUrl) : fallback([webSocket(wsUrl), http(config.l2.rpcUrl)]);
    // Two-second polling only matters in the HTTP fallback.
    const client = createPublicClient({ chain: chains.l2, transport, pollingInterval: 2_000 }) as PublicClient;
    return { client, live: wsUrl !== undefined };
  }, [config.l2.wsUrl, config.l2.rpcUrl, chains.l2]);
}

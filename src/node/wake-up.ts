import { WebSocketProvider } from "ethers";
import type { Logger } from "pino";

import { describeError } from "../common/describe-error.ts";
import { verificationRegistryAt } from "./contracts.ts";

// A closed socket is opened again this often; polling carries on meanwhile.
const WS_RECONNECT_MS = 5_000;

/**
 * Wakes the job loop on every `VerificationRequested` pushed over the WebSocket. The socket is Node's own
 * (an error on it is an event, never an uncaught exception); when it closes, it is opened again after
 * WS_RECONNECT_MS, while polling carries on. Returns the unsubscribe function.
 */
export function wakeOnNewJobs(
  url: string,
  chainId: bigint,
  registryAddress: string,
  wake: () => void,
  parentLogger: Logger,
): () => Promise<void> {
  const logger = parentLogger.child({ component: "wake-up" });
  let provider: WebSocketProvider | undefined;
  let stopped = false;
  let warned = false;
  let timer: NodeJS.Timeout | undefined;
  const connect = () => {
    if (stopped) return;
    const socket = new WebSocket(url);
    socket.addEventListener("error", () => undefined); // followed by "close", handled there
    socket.addEventListener("close", () => {
      if (stopped) return;
      if (!warned)
        logger.warn({ reconnectEverySeconds: WS_RECONNECT_MS / 1000 }, "the L2 WebSocket is closed; polling meanwhile, reconnecting");
      warned = true;
      void provider?.destroy();
      provider = undefined;
      timer = setTimeout(connect, WS_RECONNECT_MS);
    });
    socket.addEventListener("open", () => {
      if (warned) logger.info("the L2 WebSocket is back");
      warned = false;
    });
    provider = new WebSocketProvider(socket, chainId, { staticNetwork: true });
    const registry = verificationRegistryAt(registryAddress, provider);
    void registry
      .on(registry.filters.VerificationRequested(), wake)
      .catch((error: unknown) => logger.warn({ error: describeError(error) }, "subscribing to new jobs failed"));
  };
  connect();
  return async () => {
    stopped = true;
    clearTimeout(timer);
    await provider?.destroy();
  };
}

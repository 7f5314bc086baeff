import { Interface } from "ethers";
import type { Logger } from "pino";

import { abiOf } from "../common/artifacts.ts";

import { urlOrigin } from "../common/environment.ts";
import { ReconnectingSocket } from "../common/reconnecting-socket.ts";

const SUBSCRIBE_ID = 1;

/**
 * Wakes the job loop on every `VerificationRequested` the registry emits, pushed over an `eth_subscribe`
 * `logs` subscription on the L2's WebSocket. The socket reconnects with the services' one backoff
 * (`ReconnectingSocket`) and subscribes again each time, while polling carries on. Nothing in a
 * notification is trusted: it only wakes the loop, which reads the chain itself. Returns the unsubscribe
 * function.
 */
export function wakeOnNewJobs(url: string, registryAddress: string, wake: () => void, parentLogger: Logger): () => Promise<void> {
  const logger = parentLogger.child({ component: "wake-up" });
  // The topic of a new job, from the registry's own ABI.
  const newJob = new Interface(abiOf("VerificationRegistry")).getEvent("VerificationRequested")!.topicHash;
  let subscription: string | undefined;
  let warned = false;
  const socket = new ReconnectingSocket({
    urls: [url],
    onOpen: (connection) =>
      connection.send({
        jsonrpc: "2.0",
        id: SUBSCRIBE_ID,
        method: "eth_subscribe",
        params: ["logs", { address: registryAddress, topics: [newJob] }],
      }),
    onMessage: (text, connection) => {
      let message: { id?: unknown; result?: unknown; method?: unknown; params?: { subscription?: unknown } };
      try {
        message = JSON.parse(text) as typeof message;
      } catch {
        return;
      }
      if (message.id === SUBSCRIBE_ID) {
        if (typeof message.result !== "string") return connection.close(1011, "subscription refused");
        subscription = message.result;
        socket.healthy();
        if (warned) logger.info("the L2 WebSocket is back");
        warned = false;
        // A job opened while subscribing was announced to nobody: the loop looks once more.
        wake();
      } else if (message.method === "eth_subscription" && message.params?.subscription === subscription) wake();
    },
    onClose: ({ retryInMs }) => {
      subscription = undefined;
      if (!warned)
        logger.warn({ l2: urlOrigin(url), reconnectInMs: retryInMs }, "the L2 WebSocket is closed; polling meanwhile, reconnecting");
      warned = true;
    },
  });
  socket.start();
  return async () => socket.stop();
}

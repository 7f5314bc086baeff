import { Interface } from "ethers";
import type { Logger } from "pino";

import { abiOf } from "../common/artifacts.ts";
import { describeError } from "../common/describe-error.ts";
import { urlOrigin } from "../common/environment.ts";
import { JsonRpcSubscription } from "../common/json-rpc-subscription.ts";

/**
 * Wakes the job loop on every `VerificationRequested` the registry emits, pushed over an `eth_subscribe`
 * `logs` subscription on the L2's WebSocket (`JsonRpcSubscription`: the services' one reconnecting client
 * and backoff, subscribing again each time), while polling carries on. Nothing in a
 * notification is trusted: it only wakes the loop, which reads the chain itself. Returns the unsubscribe
 * function.
 */
export function wakeOnNewJobs(url: string, registryAddress: string, wake: () => void, parentLogger: Logger): () => Promise<void> {
  const logger = parentLogger.child({ component: "wake-up" });
  // The topic of a new job, from the registry's own ABI.
  const newJob = new Interface(abiOf("VerificationRegistry")).getEvent("VerificationRequested")!.topicHash;
  let warned = false;
  const subscription = new JsonRpcSubscription({
    url,
    params: ["logs", { address: registryAddress, topics: [newJob] }],
    onSubscribed: () => {
      if (warned) logger.info("the L2 WebSocket is back");
      warned = false;
      // A job opened while subscribing was announced to nobody: the loop looks once more.
      wake();
    },
    onRefused: (error) => logger.warn({ error: describeError(error) }, "the L2 refused the new-job subscription"),
    onEvent: () => wake(),
    onClose: ({ retryInMs }) => {
      if (!warned)
        logger.warn({ l2: urlOrigin(url), reconnectInMs: retryInMs }, "the L2 WebSocket is closed; polling meanwhile, reconnecting");
      warned = true;
    },
  });
  subscription.start();
  return async () => subscription.stop();
}

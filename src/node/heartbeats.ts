import type { Logger } from "pino";

import { describeError } from "../common/describe-error.ts";
import { PollingLoop } from "../common/polling-loop.ts";
import type { DelegationWatcher } from "./delegation-watcher.ts";
import type { NodeMetrics } from "./health.ts";
import type { Lifecycle } from "./lifecycle.ts";
import type { StartupStep } from "./startup.ts";
import type { TxSender } from "./tx-sender.ts";

export interface HeartbeatOptions {
  sender: Pick<TxSender, "send">;
  nodeRegistryAddress: string;
  /** `heartbeat(uint32)` with the capacity measured at start (it does not change while the node runs). */
  heartbeatData: string;
  delegation: DelegationWatcher;
  /** Warns when the burner runs low on gas money. */
  checkBalance: () => Promise<void>;
  intervalMs: number;
  metrics: NodeMetrics;
  logger: Logger;
  onError: () => void;
}

/**
 * Sends the first heartbeat and waits until it is mined: licenses are live only after it, so votes sent
 * before would be ignored. Returns early (throwing `StopRequested`) if the node is asked to stop.
 */
export async function sendFirstHeartbeat(options: HeartbeatOptions, lifecycle: Lifecycle, step: StartupStep): Promise<void> {
  const first = await step("sending the first heartbeat", () =>
    options.sender.send("heartbeat", options.nodeRegistryAddress, options.heartbeatData),
  );
  options.logger.child({ component: "heartbeats" }).info("first heartbeat sent; waiting for it to be mined");
  if ((await Promise.race([first.outcome, lifecycle.stopped()])) === "stopped") await lifecycle.throwIfStopped();
}

/**
 * The heartbeat loop: on each tick, the delegation is checked again (so a transferred license stops
 * being voted for), a heartbeat is sent while some license is delegated, and the burner's balance is
 * checked. A failed tick is retried at the next one, on the next L2 URL.
 */
export function heartbeatLoop(options: HeartbeatOptions): PollingLoop<void> {
  const logger = options.logger.child({ component: "heartbeats" });
  return new PollingLoop(
    async () => {
      await options.delegation.check();
      if (options.delegation.delegated.length === 0) return;
      const { outcome } = await options.sender.send("heartbeat", options.nodeRegistryAddress, options.heartbeatData);
      void outcome.then((result) => options.metrics.transactions.inc({ kind: "heartbeat", outcome: result }));
      await options.checkBalance();
    },
    options.intervalMs,
    (error) => {
      logger.warn({ error: describeError(error) }, "heartbeat failed; retrying at the next tick");
      options.onError();
    },
  );
}

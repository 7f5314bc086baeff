import { JsonRpcSubscription } from "../../common/json-rpc-subscription.ts";

/** A `newHeads` subscription on one of the devnet's anvil chains. */
export interface HeadSubscription {
  /**
   * Resolves once the node confirmed the subscription (a block mined before then was announced to nobody,
   * so a caller reads the chain once more after it); rejects if the socket failed first.
   */
  readonly ready: Promise<void>;
  /** Closes the socket; no head is announced after it, and `onClosed` is not called. */
  close(): void;
}

/**
 * Calls `onHead` with the number of every block the chain mines, from an `eth_subscribe` `newHeads`
 * subscription over a WebSocket to anvil, on the services' one client (`JsonRpcSubscription`), so a failure
 * of it is an event, never an uncaught exception. The devnet's chains are child processes on this host: a
 * socket that closes means its anvil is gone, so it does not reconnect; `onClosed` is told once instead,
 * and whoever follows the chain keeps its polling tick as the fallback.
 */
export function subscribeNewHeads(
  wsUrl: string,
  onHead: (blockNumber: number) => void,
  onClosed?: (error: Error) => void,
): HeadSubscription {
  let confirm: () => void = () => undefined;
  let refuse: (error: Error) => void = () => undefined;
  const ready = new Promise<void>((resolve, reject) => {
    confirm = resolve;
    refuse = reject;
  });
  ready.catch(() => undefined); // a caller that never awaits it learns of the failure through onClosed

  const subscription = new JsonRpcSubscription({
    url: wsUrl,
    params: ["newHeads"],
    reconnect: false,
    onSubscribed: () => confirm(),
    onRefused: (error) => refuse(new Error(`${wsUrl} refused the newHeads subscription: ${JSON.stringify(error)}`)),
    onEvent: (result) => {
      const head = result as { number?: unknown } | undefined;
      if (typeof head?.number === "string" && /^0x[0-9a-f]+$/i.test(head.number)) onHead(Number(head.number));
    },
    onClose: () => {
      const error = new Error(`the newHeads subscription on ${wsUrl} closed`);
      refuse(error);
      onClosed?.(error);
    },
  });
  subscription.start();

  return {
    ready,
    close() {
      refuse(new Error(`the newHeads subscription on ${wsUrl} was closed`));
      subscription.stop();
    },
  };
}

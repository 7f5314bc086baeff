import { ReconnectingSocket, type SocketClosed } from "./reconnecting-socket.ts";

const SUBSCRIBE_ID = 1;

export interface JsonRpcSubscriptionOptions {
  url: string;
  /** `eth_subscribe`'s parameters: `["newHeads"]`, `["logs", { address, topics }]`. */
  params: readonly unknown[];
  /** The node confirmed the subscription (again, after a reconnection): events from now on reach `onEvent`. */
  onSubscribed?(): void;
  /** The node refused it (then the connection is closed, and the next attempt asks again). */
  onRefused?(error: unknown): void;
  /** One notification's `result` (a head, a log), as the node sent it: unchecked. */
  onEvent(result: unknown): void;
  /** The connection ended (`SocketClosed`); the subscription is gone until `onSubscribed`. */
  onClose?(closed: SocketClosed): void;
  /** As `ReconnectingSocket`'s. */
  reconnect?: boolean;
  pingMs?: number;
  firstRetryMs?: number;
  maxRetryMs?: number;
}

/**
 * An `eth_subscribe` subscription over the services' one reconnecting WebSocket client: subscribed on each
 * connection, the backoff reset once the node confirms, each notification of that subscription passed on.
 * A block or log that came while (re)subscribing was announced to nobody, which is why `onSubscribed` is
 * told each time: its caller reads the chain once more there.
 */
export class JsonRpcSubscription {
  readonly #socket: ReconnectingSocket;
  #subscription: string | undefined;

  constructor(options: JsonRpcSubscriptionOptions) {
    this.#socket = new ReconnectingSocket({
      urls: [options.url],
      reconnect: options.reconnect,
      pingMs: options.pingMs,
      firstRetryMs: options.firstRetryMs,
      maxRetryMs: options.maxRetryMs,
      onOpen: (connection) => connection.send({ jsonrpc: "2.0", id: SUBSCRIBE_ID, method: "eth_subscribe", params: options.params }),
      onMessage: (text, connection) => {
        let message: {
          id?: unknown;
          result?: unknown;
          error?: unknown;
          method?: unknown;
          params?: { subscription?: unknown; result?: unknown };
        };
        try {
          message = JSON.parse(text) as typeof message;
        } catch {
          return;
        }
        if (typeof message !== "object" || message === null) return; // `null`, a number: not a JSON-RPC message
        if (message.id === SUBSCRIBE_ID) {
          if (typeof message.result !== "string") {
            options.onRefused?.(message.error);
            return connection.close(1011, "subscription refused");
          }
          this.#subscription = message.result;
          this.#socket.healthy();
          options.onSubscribed?.();
        } else if (message.method === "eth_subscription" && message.params?.subscription === this.#subscription) {
          options.onEvent(message.params?.result);
        }
      },
      onClose: (closed) => {
        this.#subscription = undefined;
        options.onClose?.(closed);
      },
    });
  }

  start(): void {
    this.#socket.start();
  }

  /** Ends the subscription for good; `onClose` is not told. */
  stop(): void {
    this.#subscription = undefined;
    this.#socket.stop();
  }
}

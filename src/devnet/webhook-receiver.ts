import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** One delivery as the receiver got it. */
export interface ReceivedDelivery {
  /** The body parsed with every integer as a bigint (balances and blocks are exact JSON integers). */
  body: Record<string, unknown>;
  /** The body as sent, byte for byte: what the signature covers. */
  raw: string;
  signature: string;
  deliveryId: string;
  /** When it arrived (Date.now()). */
  receivedAt: number;
}

/** Every JSON integer as a bigint, from its digits (JSON.parse's source text access, Node 21+). */
export function parseExactJson(raw: string): Record<string, unknown> {
  return JSON.parse(raw, (_key, value: unknown, context?: { source?: string }) =>
    typeof value === "number" && context?.source !== undefined && /^-?[0-9]+$/.test(context.source) ? BigInt(context.source) : value,
  ) as Record<string, unknown>;
}

/**
 * A webhook receiver on a real port: records each delivery and answers `status()` (200 unless told otherwise).
 * The local stack runs one for its demo subscription, the tests and the webhooks benchmark their own; waits
 * resolve on the request that makes them true, never on a timer.
 */
export class WebhookReceiver {
  /** The deliveries answered 2xx, in arrival order. */
  readonly deliveries: ReceivedDelivery[] = [];
  /** The status of every request answered, in order. */
  readonly answered: number[] = [];
  status: () => number = () => 200;
  readonly #onDelivery: ((delivery: ReceivedDelivery) => void) | undefined;
  #waiters: Array<{ until: () => boolean; resolve: () => void }> = [];
  readonly #server: Server;

  constructor(options: { onDelivery?: (delivery: ReceivedDelivery) => void } = {}) {
    this.#onDelivery = options.onDelivery;
    this.#server = createServer((request, response) => {
      let raw = "";
      request.setEncoding("utf8");
      request.on("data", (chunk: string) => (raw += chunk));
      request.on("end", () => {
        const status = this.status();
        this.answered.push(status);
        if (status >= 200 && status < 300) {
          const delivery = {
            body: parseExactJson(raw),
            raw,
            signature: String(request.headers["avn-signature"]),
            deliveryId: String(request.headers["avn-delivery-id"]),
            receivedAt: Date.now(),
          };
          this.deliveries.push(delivery);
          this.#onDelivery?.(delivery);
        }
        response.writeHead(status).end();
        this.#check();
      });
    });
  }

  /** Listens on `host` (loopback unless told) and returns the URL to subscribe with. */
  async listen(port = 0, host = "127.0.0.1"): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(port, host, resolve));
    return `http://${host}:${(this.#server.address() as AddressInfo).port}/hook`;
  }

  /** Resolves once `until` holds: checked now and after every request. */
  waitFor(until: () => boolean): Promise<void> {
    if (until()) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ until, resolve }));
  }

  forSubscription(id: string): ReceivedDelivery[] {
    return this.deliveries.filter((delivery) => delivery.body.subscriptionId === id);
  }

  #check(): void {
    this.#waiters = this.#waiters.filter((waiter) => {
      if (!waiter.until()) return true;
      waiter.resolve();
      return false;
    });
  }

  close(): Promise<void> {
    this.#server.closeAllConnections();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}

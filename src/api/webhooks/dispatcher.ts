import { signWebhook, WEBHOOK_SIGNATURE_HEADER } from "@avn/protocol/webhook-signature";
import type { AttemptOutcome, ClaimedDelivery, DeliveryQueue } from "./delivery-queue.ts";

/** POSTs one delivery: webhook-poster.ts's postWebhook, bound to the SSRF policy. */
export type PostDelivery = (url: URL, body: string, headers: Record<string, string>) => Promise<AttemptOutcome>;

export interface DispatcherOptions {
  queue: DeliveryQueue;
  post: PostDelivery;
  /** This process's name on the leases it takes. */
  owner: string;
  /** Deliveries in flight at once, to different subscriptions. */
  concurrency: number;
  /** An attempt whose outcome could not be recorded (the key database away): its lease runs out and it is sent again. */
  onError: (error: unknown) => void;
  now?: () => number;
}

/**
 * Sends the queue's changes: takes the due ones (each the oldest of its subscription), POSTs each signed with
 * its subscription's secret, records the attempt, and takes more as slots free up, until nothing is due. One
 * slow receiver holds one slot, not the others. The signature's time is the attempt's, so a retry is never
 * refused as stale; the body and its id are the same on every attempt.
 */
export class WebhookDispatcher {
  readonly #options: DispatcherOptions;
  readonly #now: () => number;
  readonly #inFlight = new Set<Promise<void>>();

  constructor(options: DispatcherOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  /** Delivers until nothing is due (or `isStopping`), then waits for the attempts in flight. */
  async drain(isStopping: () => boolean = () => false): Promise<void> {
    const { queue, owner, concurrency } = this.#options;
    while (!isStopping()) {
      const free = concurrency - this.#inFlight.size;
      const claimed = free > 0 ? await queue.claim(owner, free, this.#now()) : [];
      for (const delivery of claimed) {
        const attempt = this.#deliver(delivery)
          .catch(this.#options.onError)
          .finally(() => this.#inFlight.delete(attempt));
        this.#inFlight.add(attempt);
      }
      if (this.#inFlight.size === 0) return;
      // A finished attempt frees a slot and may make its subscription's next change due.
      if (claimed.length === 0 || this.#inFlight.size >= concurrency) await Promise.race(this.#inFlight);
    }
    await Promise.all(this.#inFlight);
  }

  async #deliver(delivery: ClaimedDelivery): Promise<void> {
    const timestamp = Math.floor(this.#now() / 1000);
    const headers = {
      [WEBHOOK_SIGNATURE_HEADER]: signWebhook(delivery.payload, delivery.secret, timestamp),
      "Avn-Delivery-Id": delivery.id,
    };
    const outcome = await this.#options.post(new URL(delivery.url), delivery.payload, headers);
    await this.#options.queue.settle(this.#options.owner, delivery, outcome, this.#now());
  }
}

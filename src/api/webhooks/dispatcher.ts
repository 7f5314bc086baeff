import { AvnError } from "@avn/protocol/errors";
import { signWebhook, WEBHOOK_SIGNATURE_HEADER } from "@avn/protocol/webhook-signature";
import type { AttemptOutcome, ClaimedDelivery, DeliveryQueue } from "./delivery-queue.ts";

/** The quorum's attestation of a holding at a block or slot, as the API's JSON writes it (attested-query.ts). */
export type AttestHolding = (chain: "ethereum" | "solana", owner: string, asset: string, block: bigint) => Promise<unknown>;

/** The change was taken by another process while this one obtained its attestation. */
class LeaseLostError extends AvnError<"WEBHOOK_LEASE_LOST"> {
  constructor() {
    super("WEBHOOK_LEASE_LOST", "the change's lease ran out while its attestation was obtained");
    this.name = "LeaseLostError";
  }
}

/** POSTs one delivery: webhook-poster.ts's postWebhook, bound to the SSRF policy. */
export type PostDelivery = (url: URL, body: string, headers: Record<string, string>) => Promise<AttemptOutcome>;

export interface DispatcherOptions {
  queue: DeliveryQueue;
  post: PostDelivery;
  /** This process's name on the leases it takes. */
  owner: string;
  /** Deliveries in flight at once, to different subscriptions. */
  concurrency: number;
  /** With the attestation hub: what `attest: true` subscriptions add to each delivery. */
  attest?: AttestHolding;
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

  async #deliver(claimed: ClaimedDelivery): Promise<void> {
    const started = performance.now();
    let delivery: ClaimedDelivery;
    try {
      delivery = await this.#withAttestation(claimed);
    } catch (error) {
      if (error instanceof LeaseLostError) return; // another process sends it now
      // No quorum now (or no hub any more): an attempt that failed, retried with the others' backoff.
      const reason = error instanceof Error ? error.message : String(error);
      const outcome = { ok: false, latencyMs: performance.now() - started, error: `attestation: ${reason}` };
      return this.#options.queue.settle(this.#options.owner, claimed, outcome, this.#now());
    }
    const timestamp = Math.floor(this.#now() / 1000);
    const headers = {
      [WEBHOOK_SIGNATURE_HEADER]: signWebhook(delivery.payload, delivery.secret, timestamp),
      "Avn-Delivery-Id": delivery.id,
    };
    const outcome = await this.#options.post(new URL(delivery.url), delivery.payload, headers);
    await this.#options.queue.settle(this.#options.owner, delivery, outcome, this.#now());
  }

  /**
   * The delivery with the quorum's attestation of its balance, for a subscription that asked for one: obtained
   * once, at the change's block or slot, and kept with the body, so every retry sends the same bytes.
   */
  async #withAttestation(delivery: ClaimedDelivery): Promise<ClaimedDelivery> {
    if (!delivery.attest || delivery.payload.includes('"attestation":')) return delivery;
    const attest = this.#options.attest;
    if (attest === undefined) throw new Error("attested answers are not enabled on this server");
    const change = JSON.parse(delivery.payload) as { chain: "ethereum" | "solana"; owner: string; asset: string; block: number };
    const attestation = await attest(change.chain, change.owner, change.asset, BigInt(change.block));
    // The body ends with its closing brace: the attestation (strings only) goes last, the rest byte for byte.
    const payload = `${delivery.payload.slice(0, -1)},"attestation":${JSON.stringify(attestation)}}`;
    if (!(await this.#options.queue.setPayload(this.#options.owner, delivery, payload, this.#now()))) throw new LeaseLostError();
    return { ...delivery, payload };
  }
}

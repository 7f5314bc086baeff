import { AvnError } from "@avn/protocol/errors";
import { signWebhook, WEBHOOK_SIGNATURE_HEADER } from "@avn/protocol/webhook-signature";
import { CLAIM_RENEWALS_PER_LEASE, type AttemptOutcome, type ClaimedDelivery, type DeliveryQueue } from "./delivery-queue.ts";

/** The quorum's attestation of a holding at a block or slot, as the API's JSON writes it (attested-query.ts). */
export type AttestHolding = (chain: "ethereum" | "solana", owner: string, asset: string, block: bigint) => Promise<unknown>;

/** The change was taken by another claim (another process's, or this one's after a stall) during its attestation. */
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
  /**
   * An attempt whose outcome could not be recorded, or whose lease could not be renewed (the key database away):
   * its lease runs out and it is sent again. The attempt goes on meanwhile; renewing is tried again.
   */
  onError: (error: unknown) => void;
  /** Told of each renewal of an attempt's lease, at `nowMs` (what an operator's metrics, or a test, may follow). */
  onLeaseRenewed?: (delivery: ClaimedDelivery, nowMs: number) => void;
  now?: () => number;
}

/**
 * One attempt's hold on its change, kept while the attempt runs: its lease is renewed every
 * `leaseMs / CLAIM_RENEWALS_PER_LEASE` from the claim until the attempt has been recorded, so an attempt longer
 * than the lease (a slow attestation, a POST up to its timeout) keeps its change, and a process that dies
 * mid-attempt leaves it to another after one lease. The timer's renewals do not overlap: the next is timed from
 * the end of the last. One that fails (the key database away) is reported and the next tries again; one that
 * finds the change taken by another claim ends the renewals, and the attempt must not send it.
 */
class AttemptLease {
  readonly #queue: DeliveryQueue;
  readonly #delivery: ClaimedDelivery;
  readonly #now: () => number;
  readonly #onError: (error: unknown) => void;
  readonly #onRenewed: (delivery: ClaimedDelivery, nowMs: number) => void;
  readonly #renewEveryMs: number;
  #heldUntilMs: number;
  #lost = false;
  #stopped = false;
  #timer: NodeJS.Timeout | undefined;

  constructor(
    queue: DeliveryQueue,
    delivery: ClaimedDelivery,
    now: () => number,
    onError: (error: unknown) => void,
    onRenewed: (delivery: ClaimedDelivery, nowMs: number) => void = () => undefined,
  ) {
    this.#queue = queue;
    this.#delivery = delivery;
    this.#now = now;
    this.#onError = onError;
    this.#onRenewed = onRenewed;
    this.#renewEveryMs = queue.leaseMs / CLAIM_RENEWALS_PER_LEASE;
    this.#heldUntilMs = delivery.leaseUntilMs;
    this.#schedule();
  }

  /** The lease was extended from `nowMs` by another write of this claim (the attested body's). */
  extended(nowMs: number): void {
    this.#heldUntilMs = Math.max(this.#heldUntilMs, nowMs + this.#queue.leaseMs);
  }

  /**
   * Whether the change may be sent now: still this claim's by its last renewal, for one more renewal period at
   * least (else renewed first). False when another claim took it, or when it is not known (the renewal failed):
   * unsent, it is taken again once the lease runs out, with the same id.
   */
  async mayPost(): Promise<boolean> {
    if (this.#lost) return false;
    if (this.#now() + this.#renewEveryMs < this.#heldUntilMs) return true;
    return this.#renew();
  }

  /** The attempt is over (recorded, or given up): no more renewals. */
  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }

  #schedule(): void {
    if (this.#stopped || this.#lost) return;
    const next = () => this.#schedule();
    this.#timer = setTimeout(() => void this.#renew().then(next, next), this.#renewEveryMs);
    // The attempt keeps the process busy, not its renewals.
    this.#timer.unref();
  }

  async #renew(): Promise<boolean> {
    const nowMs = this.#now();
    try {
      if (await this.#queue.renew(this.#delivery, nowMs)) {
        this.extended(nowMs);
        this.#onRenewed(this.#delivery, nowMs);
        return true;
      }
      // Taken by another claim (or cancelled). After the record, the record itself ended the lease: no news.
      if (!this.#stopped) this.#lost = true;
    } catch (error) {
      if (!this.#stopped) this.#onError(error);
    }
    return false;
  }
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
    const { queue } = this.#options;
    // Renewed until the attempt is on record: a slow record must not let another process send it meanwhile.
    const lease = new AttemptLease(queue, claimed, this.#now, this.#options.onError, this.#options.onLeaseRenewed);
    try {
      const started = performance.now();
      let delivery: ClaimedDelivery;
      try {
        delivery = await this.#withAttestation(claimed, lease);
      } catch (error) {
        if (error instanceof LeaseLostError) return; // another process sends it now
        // No quorum now (or no hub any more): an attempt that failed, retried with the others' backoff.
        const reason = error instanceof Error ? error.message : String(error);
        const outcome = { ok: false, latencyMs: performance.now() - started, error: `attestation: ${reason}` };
        return await queue.settle(claimed, outcome, this.#now());
      }
      // Another claim took it (this process stalled past the lease), or that is not known: not sent by this one.
      if (!(await lease.mayPost())) return;
      const timestamp = Math.floor(this.#now() / 1000);
      const headers = {
        [WEBHOOK_SIGNATURE_HEADER]: signWebhook(delivery.payload, delivery.secret, timestamp),
        "Avn-Delivery-Id": delivery.id,
      };
      const outcome = await this.#options.post(new URL(delivery.url), delivery.payload, headers);
      // Recorded whether or not the lease held: settle changes the queue only for the claim that holds it.
      await queue.settle(delivery, outcome, this.#now());
    } finally {
      lease.stop();
    }
  }

  /**
   * The delivery with the quorum's attestation of its balance, for a subscription that asked for one: obtained
   * once, at the change's block or slot, and kept with the body, so every retry sends the same bytes.
   */
  async #withAttestation(delivery: ClaimedDelivery, lease: AttemptLease): Promise<ClaimedDelivery> {
    if (!delivery.attest || delivery.payload.includes('"attestation":')) return delivery;
    const attest = this.#options.attest;
    if (attest === undefined) throw new Error("attested answers are not enabled on this server");
    const change = JSON.parse(delivery.payload) as { chain: "ethereum" | "solana"; owner: string; asset: string; block: number };
    const attestation = await attest(change.chain, change.owner, change.asset, BigInt(change.block));
    // The body ends with its closing brace: the attestation (strings only) goes last, the rest byte for byte.
    const payload = `${delivery.payload.slice(0, -1)},"attestation":${JSON.stringify(attestation)}}`;
    const nowMs = this.#now();
    if (!(await this.#options.queue.setPayload(delivery, payload, nowMs))) throw new LeaseLostError();
    lease.extended(nowMs);
    return { ...delivery, payload };
  }
}

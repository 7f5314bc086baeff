import { randomUUID } from "node:crypto";

import { sql, type Kysely } from "kysely";

import type { DeliveryAttempt } from "@avn/protocol/webhook-wire";
import type { KeyDatabaseSchema } from "../keys/database/schema.ts";

type Db = Kysely<KeyDatabaseSchema>;

/** A change taken from the queue by one process, to be POSTed. */
export interface ClaimedDelivery {
  seq: bigint;
  id: string;
  subscriptionId: string;
  payload: string;
  attempts: number;
  firstAttemptMs: number | undefined;
  url: string;
  secret: string;
  /** Its subscription asked for the quorum's attestation of each new balance. */
  attest: boolean;
  /**
   * This claim's name on the change (`lease_owner`): the process's owner and a name of its own, so that the
   * process taking the change again after its lease ran out (paused, or cut off from the database) makes a
   * new lease, and the attempt still running under the old one sees it lost.
   */
  lease: string;
  /** Until when the claim holds the change unless renewed (`lease_until_ms`). */
  leaseUntilMs: number;
}

/** What one attempt came to: the receiver's answer or why there was none. */
export interface AttemptOutcome {
  ok: boolean;
  status?: number;
  latencyMs: number;
  error?: string;
}

export interface RetryPolicy {
  /** The first retry's delay; each next one doubles, up to `maxDelayMs`. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** How long a change is retried from its first attempt before its subscription is marked failing. */
  windowMs: number;
}

/** Retries for 24 h, 5 s after the first failure, then 10 s, 20 s… at most an hour apart. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = { baseDelayMs: 5_000, maxDelayMs: 3_600_000, windowMs: 24 * 3_600_000 };

/**
 * How long a claimed change is its claim's without renewal. The dispatcher renews it every
 * `CLAIM_LEASE_MS / CLAIM_RENEWALS_PER_LEASE` while the attempt runs (attestation, POST, record), so an attempt
 * may last longer than this; a process that dies mid-attempt holds the change at most this long after its last
 * renewal, and another process sends it again (the bar: 10 s from the crash, with the dispatch poll, 250 ms; 8 s
 * measured 9.1 s from the kill to every stream right again in `npm run chaos`, too close to it).
 */
export const CLAIM_LEASE_MS = 6_000;

/**
 * Renewals in one lease (every 1.5 s at 6 s): three in a row may come late or fail (an event loop busy for 4.5 s, the
 * key database slow or away) before another process may take the change while its attempt still runs.
 */
export const CLAIM_RENEWALS_PER_LEASE = 4;

/** Attempts kept per subscription for `GET …/deliveries`. */
export const ATTEMPTS_LISTED = 100;

/**
 * The delivery queue in the key database: changes recorded by the followers, taken by any API process's
 * dispatcher. A change is taken with a lease (a conditional update, so two processes never take the same one
 * at once) and only when it is the oldest pending change of its subscription, so deliveries arrive in order
 * per subscription. The attempt renews its lease while it runs (`renew`); a process that dies while delivering
 * leaves its lease to expire, and the change is taken again with the same id: at least once.
 */
export class DeliveryQueue {
  /** How long a claim holds a change without renewal (`CLAIM_LEASE_MS` unless told). */
  readonly leaseMs: number;
  readonly #db: Db;
  readonly #policy: RetryPolicy;

  constructor(db: Db, policy: RetryPolicy = DEFAULT_RETRY_POLICY, leaseMs = CLAIM_LEASE_MS) {
    this.#db = db;
    this.#policy = policy;
    this.leaseMs = leaseMs;
  }

  /** Takes up to `limit` changes due now, each the head of its (active) subscription's queue, for `owner`. */
  async claim(owner: string, limit: number, nowMs = Date.now()): Promise<ClaimedDelivery[]> {
    const heads = await this.#db
      .selectFrom("webhook_events as e")
      .innerJoin("webhook_subscriptions as s", "s.id", "e.subscription_id")
      .select(["e.seq", "e.id", "e.subscription_id", "e.payload", "e.attempts", "e.first_attempt_ms", "s.url", "s.secret", "s.attest"])
      .where("e.state", "=", "pending")
      .where("s.state", "=", "active")
      .where("e.next_attempt_ms", "<=", nowMs)
      .where((eb) => eb.or([eb("e.lease_until_ms", "is", null), eb("e.lease_until_ms", "<", nowMs)]))
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom("webhook_events as p")
              .select("p.seq")
              .where("p.state", "=", "pending")
              .whereRef("p.subscription_id", "=", "e.subscription_id")
              .whereRef("p.seq", "<", "e.seq"),
          ),
        ),
      )
      .orderBy("e.next_attempt_ms")
      .limit(limit)
      .execute();
    const claimed: ClaimedDelivery[] = [];
    for (const head of heads) {
      const lease = `${owner}/${randomUUID()}`;
      const leaseUntilMs = nowMs + this.leaseMs;
      // Taken only if nobody took it since the read: the update rechecks the lease on the row it locks.
      const taken = await this.#db
        .updateTable("webhook_events")
        .set({ lease_owner: lease, lease_until_ms: leaseUntilMs })
        .where("seq", "=", head.seq)
        .where("state", "=", "pending")
        .where((eb) => eb.or([eb("lease_until_ms", "is", null), eb("lease_until_ms", "<", nowMs)]))
        .executeTakeFirst();
      if (taken.numUpdatedRows === 0n) continue;
      claimed.push({
        seq: BigInt(head.seq),
        id: head.id,
        subscriptionId: head.subscription_id,
        payload: head.payload,
        attempts: head.attempts,
        firstAttemptMs: head.first_attempt_ms === null ? undefined : Number(head.first_attempt_ms),
        url: head.url,
        secret: head.secret,
        attest: head.attest === 1,
        lease,
        leaseUntilMs,
      });
    }
    return claimed;
  }

  /**
   * Records an attempt of `delivery` and what follows: delivered, due again after the backoff, or, once the
   * retry window is over, failed with its subscription marked failing. Nothing is dropped without this record.
   */
  async settle(delivery: ClaimedDelivery, outcome: AttemptOutcome, nowMs = Date.now()): Promise<void> {
    const firstAttemptMs = delivery.firstAttemptMs ?? nowMs;
    const attempts = delivery.attempts + 1;
    const expired = !outcome.ok && nowMs - firstAttemptMs >= this.#policy.windowMs;
    await this.#db.transaction().execute(async (transaction) => {
      await transaction
        .insertInto("webhook_attempts")
        .values({
          event_id: delivery.id,
          subscription_id: delivery.subscriptionId,
          attempted_at: new Date(nowMs).toISOString(),
          ok: outcome.ok ? 1 : 0,
          status: outcome.status ?? null,
          latency_ms: Math.round(outcome.latencyMs),
          error: outcome.error ?? null,
        })
        .execute();
      const settled = await transaction
        .updateTable("webhook_events")
        .set({
          state: outcome.ok ? "delivered" : expired ? "failed" : "pending",
          attempts,
          first_attempt_ms: firstAttemptMs,
          next_attempt_ms: outcome.ok || expired ? nowMs : nowMs + this.retryDelayMs(attempts),
          lease_owner: null,
          lease_until_ms: null,
        })
        .where("seq", "=", delivery.seq.toString())
        .where("lease_owner", "=", delivery.lease)
        // Cancelled meanwhile (its subscription deleted during the attempt): it stays cancelled.
        .where("state", "=", "pending")
        .executeTakeFirst();
      // The attempt happened and is on record; its outcome decides what follows only while the change is still
      // this claim's (a lease that ran out during a stalled attempt belongs to whoever took the change since).
      if (expired && settled.numUpdatedRows > 0n)
        await transaction
          .updateTable("webhook_subscriptions")
          .set({ state: "failing" })
          .where("id", "=", delivery.subscriptionId)
          .where("state", "=", "active")
          .execute();
    });
  }

  /**
   * Keeps the body a delivery is sent with from now on (the same on every attempt): once its attestation is
   * added. Renews the lease for the POST that follows; false when the change is no longer this claim's (its
   * lease ran out while the attestation was obtained, and another claim took it): it must not be sent.
   */
  async setPayload(delivery: ClaimedDelivery, payload: string, nowMs = Date.now()): Promise<boolean> {
    const result = await this.#db
      .updateTable("webhook_events")
      .set({ payload, lease_until_ms: nowMs + this.leaseMs })
      .where("seq", "=", delivery.seq.toString())
      .where("lease_owner", "=", delivery.lease)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /**
   * Extends the claim's lease to `leaseMs` from `nowMs`, for an attempt still running: only while the change is
   * this claim's and pending. False when it is not: another claim took it after the lease ran out (this process
   * was paused, or cut off from the database, for longer than the lease), or it was cancelled (its
   * subscription deleted). The claim alone decides, not the time: a lease that ran out but that nobody took is
   * safely extended, since taking it is itself a conditional update of the same row.
   */
  async renew(delivery: ClaimedDelivery, nowMs = Date.now()): Promise<boolean> {
    const result = await this.#db
      .updateTable("webhook_events")
      .set({ lease_until_ms: nowMs + this.leaseMs })
      .where("seq", "=", delivery.seq.toString())
      .where("lease_owner", "=", delivery.lease)
      .where("state", "=", "pending")
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /** The delay before attempt `attempts + 1`: doubling from the base, capped. */
  retryDelayMs(attempts: number): number {
    return Math.min(this.#policy.maxDelayMs, this.#policy.baseDelayMs * 2 ** Math.min(attempts - 1, 30));
  }

  /** The earliest time a pending change of an active subscription is due, or undefined when none is. */
  async nextDueMs(): Promise<number | undefined> {
    const row = await this.#db
      .selectFrom("webhook_events as e")
      .innerJoin("webhook_subscriptions as s", "s.id", "e.subscription_id")
      .select((eb) => eb.fn.min<number | string>("e.next_attempt_ms").as("due"))
      .where("e.state", "=", "pending")
      .where("s.state", "=", "active")
      .executeTakeFirst();
    return row?.due === null || row?.due === undefined ? undefined : Number(row.due);
  }

  /**
   * Sends the subscription's changes observed at or after `since` again (delivered ones too, with their ids)
   * and makes a failing subscription active again. Returns how many changes are due.
   */
  async replay(subscriptionId: string, since: Date, nowMs = Date.now()): Promise<number> {
    return this.#db.transaction().execute(async (transaction) => {
      await transaction
        .updateTable("webhook_subscriptions")
        .set({ state: "active" })
        .where("id", "=", subscriptionId)
        .where("state", "=", "failing")
        .execute();
      const result = await transaction
        .updateTable("webhook_events")
        .set({ state: "pending", attempts: 0, first_attempt_ms: null, next_attempt_ms: nowMs })
        .where("subscription_id", "=", subscriptionId)
        .where("observed_at", ">=", since.toISOString())
        .where("lease_owner", "is", null)
        .execute();
      // A change held back behind a failed one is due again too: the subscription is active now.
      await transaction
        .updateTable("webhook_events")
        .set({ next_attempt_ms: sql<number>`case when next_attempt_ms < ${nowMs} then next_attempt_ms else ${nowMs} end` })
        .where("subscription_id", "=", subscriptionId)
        .where("state", "=", "pending")
        .execute();
      return result.reduce((sum, row) => sum + Number(row.numUpdatedRows), 0);
    });
  }

  /** The subscription's latest attempts, newest first. */
  async attempts(subscriptionId: string, limit = ATTEMPTS_LISTED): Promise<DeliveryAttempt[]> {
    const rows = await this.#db
      .selectFrom("webhook_attempts")
      .selectAll()
      .where("subscription_id", "=", subscriptionId)
      .orderBy("attempted_at", "desc")
      .limit(limit)
      .execute();
    return rows.map((row) => ({
      deliveryId: row.event_id,
      attemptedAt: row.attempted_at,
      ok: row.ok === 1,
      ...(row.status === null ? {} : { status: row.status }),
      latencyMs: row.latency_ms,
      ...(row.error === null ? {} : { error: row.error }),
    }));
  }
}

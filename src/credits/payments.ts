import type { CreditsDatabase, CreditsSchema, MovementKind } from "./database.ts";
import { moveCredits, type Trx } from "./movements.ts";

/**
 * The Stripe side of the ledger: each event applied once, purchases credited to their claim account, and
 * what refunds and disputes take back. A payment takes back from its account its credits in proportion to
 * what its refunded total and open or lost disputes return of what the buyer was charged (`takenBack`),
 * whatever order Stripe's events arrive in; what it takes beyond the balance (credits already redeemed) is
 * owed.
 */
export class PaymentBook {
  readonly #db: CreditsDatabase;
  readonly #now: () => Date;

  constructor(db: CreditsDatabase, now: () => Date) {
    this.#db = db;
    this.#now = now;
  }

  /**
   * Runs `apply` for Stripe event `eventId` once: a replay of an event already handled (or being handled:
   * the transaction serializes them) returns its recorded outcome and changes nothing.
   */
  async handleEventOnce(
    eventId: string,
    type: string,
    apply: (trx: Trx) => Promise<string>,
  ): Promise<{ duplicate: boolean; outcome: string }> {
    return this.#db.transaction().execute(async (trx) => {
      const seen = await trx.selectFrom("stripe_events").select("outcome").where("event_id", "=", eventId).executeTakeFirst();
      if (seen !== undefined) return { duplicate: true, outcome: seen.outcome };
      const outcome = await apply(trx);
      await trx.insertInto("stripe_events").values({ event_id: eventId, type, outcome, received_at: this.#iso() }).execute();
      return { duplicate: false, outcome };
    });
  }

  /**
   * A paid checkout: credits `credits` to `account` (or parks the payment with `problem` when it named no
   * valid account), then takes back what refunds and disputes that arrived before it hold. `charged` is
   * what the buyer was charged at the rate (tax and shipping included), at least `credits`: the base that
   * refunds and disputes are measured against.
   */
  async purchase(
    trx: Trx,
    input: { paymentIntent: string; session: string; account: string | null; credits: number; charged: number; problem: string | null },
  ): Promise<string> {
    if (!(
      Number.isSafeInteger(input.credits) &&
      Number.isSafeInteger(input.charged) &&
      input.credits >= 0 &&
      input.charged >= input.credits
    )) {
      throw new Error(`a payment charged ${input.charged} at the rate cannot credit ${input.credits}`);
    }
    const row = await trx.selectFrom("payments").selectAll().where("payment_intent", "=", input.paymentIntent).executeTakeFirst();
    if (row !== undefined && (row.purchased > 0 || row.problem !== null)) return "already credited";
    const account = input.problem === null ? input.account : null;
    if (row === undefined) {
      await trx
        .insertInto("payments")
        .values({
          payment_intent: input.paymentIntent,
          checkout_session: input.session,
          account,
          purchased: input.credits,
          charged: input.charged,
          refunded: 0,
          disputed: 0,
          taken: 0,
          problem: input.problem,
          created_at: this.#iso(),
        })
        .execute();
    } else {
      await trx
        .updateTable("payments")
        .set({ checkout_session: input.session, account, purchased: input.credits, charged: input.charged, problem: input.problem })
        .where("payment_intent", "=", input.paymentIntent)
        .execute();
    }
    if (account === null) return `not credited: ${input.problem}`;
    await this.#move(trx, account, input.credits, "purchase", input.paymentIntent);
    const early = row ?? { refunded: 0, disputed: 0 };
    await this.#settle(
      trx,
      input.paymentIntent,
      early.refunded >= early.disputed ? "refund" : "dispute",
      `${input.paymentIntent}:before-purchase`,
    );
    return `credited ${input.credits}`;
  }

  /** A refund: the payment's refunded total is now `refundedTotal` at the rate (Stripe states the running total). */
  async refund(trx: Trx, input: { paymentIntent: string; refundedTotal: number; eventId: string }): Promise<string> {
    const row = await this.#paymentRow(trx, input.paymentIntent);
    if (input.refundedTotal > row.refunded) {
      await trx.updateTable("payments").set({ refunded: input.refundedTotal }).where("payment_intent", "=", input.paymentIntent).execute();
    }
    // Referenced by payment and event: one movement per refund event, each traceable to its purchase.
    return this.#settle(trx, input.paymentIntent, "refund", `${input.paymentIntent}:${input.eventId}`);
  }

  /** A dispute opened: the credits of what it disputes (`amount` at the rate) are taken back, as far as the payment still has them. */
  async disputeOpened(trx: Trx, input: { paymentIntent: string; disputeId: string; amount: number }): Promise<string> {
    const existing = await trx.selectFrom("disputes").select("status").where("dispute_id", "=", input.disputeId).executeTakeFirst();
    if (existing !== undefined) return "already recorded";
    const row = await this.#paymentRow(trx, input.paymentIntent);
    await trx
      .insertInto("disputes")
      .values({ dispute_id: input.disputeId, payment_intent: input.paymentIntent, credits: input.amount, status: "open" })
      .execute();
    await trx
      .updateTable("payments")
      .set({ disputed: row.disputed + input.amount })
      .where("payment_intent", "=", input.paymentIntent)
      .execute();
    return this.#settle(trx, input.paymentIntent, "dispute", input.disputeId);
  }

  /** A dispute closed: won, what it held comes back; lost, it stays taken. */
  async disputeClosed(trx: Trx, input: { paymentIntent: string; disputeId: string; amount: number; won: boolean }): Promise<string> {
    let dispute = await trx.selectFrom("disputes").selectAll().where("dispute_id", "=", input.disputeId).executeTakeFirst();
    if (dispute === undefined) {
      // Its opening never arrived (or arrives later): record it as opened, then close it.
      await this.disputeOpened(trx, input);
      dispute = await trx.selectFrom("disputes").selectAll().where("dispute_id", "=", input.disputeId).executeTakeFirstOrThrow();
    }
    if (dispute.status !== "open") return `already ${dispute.status}`;
    await trx
      .updateTable("disputes")
      .set({ status: input.won ? "won" : "lost" })
      .where("dispute_id", "=", input.disputeId)
      .execute();
    if (!input.won) return "lost: stays taken";
    const row = await this.#paymentRow(trx, input.paymentIntent);
    await trx
      .updateTable("payments")
      .set({ disputed: row.disputed - dispute.credits })
      .where("payment_intent", "=", input.paymentIntent)
      .execute();
    return `won: ${await this.#settle(trx, input.paymentIntent, "dispute_won", input.disputeId)}`;
  }

  /**
   * Brings what a payment took back from its account to what it should (`takenBack` of its refunded total
   * and open or lost disputes). The difference is one movement (a debit, or a credit when a dispute was won).
   */
  async #settle(trx: Trx, paymentIntent: string, kind: MovementKind, reference: string): Promise<string> {
    const row = await trx.selectFrom("payments").selectAll().where("payment_intent", "=", paymentIntent).executeTakeFirstOrThrow();
    if (row.account === null) return "recorded before its purchase";
    const target = takenBack(row.purchased, row.charged ?? row.purchased, row.refunded + row.disputed);
    const delta = target - row.taken;
    if (delta === 0) return "nothing to change";
    await trx.updateTable("payments").set({ taken: target }).where("payment_intent", "=", paymentIntent).execute();
    await this.#move(trx, row.account, -delta, kind, reference);
    return delta > 0 ? `debited ${delta}` : `credited back ${-delta}`;
  }

  async #paymentRow(trx: Trx, paymentIntent: string): Promise<CreditsSchema["payments"]> {
    const row = await trx.selectFrom("payments").selectAll().where("payment_intent", "=", paymentIntent).executeTakeFirst();
    if (row !== undefined) return row;
    const placeholder = {
      payment_intent: paymentIntent,
      checkout_session: null,
      account: null,
      purchased: 0,
      charged: null,
      refunded: 0,
      disputed: 0,
      taken: 0,
      problem: null,
      created_at: this.#iso(),
    };
    await trx.insertInto("payments").values(placeholder).execute();
    return placeholder;
  }

  async #move(trx: Trx, account: string, amount: number, kind: MovementKind, reference: string): Promise<void> {
    await moveCredits(trx, account, amount, kind, reference, this.#iso());
  }

  #iso(): string {
    return this.#now().toISOString();
  }
}

/**
 * The credits a payment takes back when `returned` (its refunded total plus open or lost disputes) of the
 * `charged` amount goes back to the buyer: `purchased × returned / charged`, rounded up (every credit the
 * buyer keeps is paid for by money the operator keeps), never more than `purchased`. Computed from the
 * running totals each time, so a sequence of refunds never drifts: whatever steps it takes, it has taken
 * this exactly, and a refund of the whole charge takes back every credit.
 */
export function takenBack(purchased: number, charged: number, returned: number): number {
  if (purchased <= 0 || returned <= 0) return 0;
  if (returned >= charged) return purchased;
  // In bigints: purchased × returned may pass 2^53.
  const [p, r, c] = [BigInt(purchased), BigInt(returned), BigInt(charged)];
  return Number((p * r + c - 1n) / c);
}

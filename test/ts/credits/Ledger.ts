import { expect } from "chai";
import fc from "fast-check";

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

import { connectDatabase } from "../../../src/common/database.ts";
import { connectCreditsDatabase, creditsMigrations, type CreditsSchema } from "../../../src/credits/database.ts";
import { CreditsError } from "../../../src/credits/errors.ts";
import { Ledger } from "../../../src/credits/ledger.ts";
import { EXPIRY_SETTLE_MARGIN_SECONDS } from "../../../src/credits/voucher-book.ts";

const ACCOUNTS = ["0x00000000000000000000000000000000000000a1", "0x00000000000000000000000000000000000000b2"];
const PAYMENTS = ["pi_1", "pi_2", "pi_3", "pi_4"];
/** Disputed amounts, at the rate (as refunds are): measured against the charge, like them. */
const DISPUTES = [
  { id: "dp_1", payment: "pi_1", amount: 300 },
  { id: "dp_2", payment: "pi_2", amount: 150 },
  { id: "dp_3", payment: "pi_1", amount: 500 },
];

type Apply = Parameters<Ledger["payments"]["handleEventOnce"]>[2];

type Op =
  | { type: "purchase"; payment: number; account: number; credits: number; taxAndShipping: number }
  | { type: "refund"; payment: number; total: number }
  | { type: "dispute"; dispute: number; close?: "won" | "lost" }
  | { type: "replay"; index: number }
  | { type: "redeem"; account: number; price: number; quantity: number; request: number }
  | { type: "settle"; account: number; claimed: boolean };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    type: fc.constant("purchase" as const),
    payment: fc.nat(3),
    account: fc.nat(1),
    credits: fc.integer({ min: 1, max: 1_000 }),
    // What the charge held beyond the credits (tax, shipping): refunds and disputes are measured against the whole charge.
    taxAndShipping: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 300 })),
  }),
  fc.record({ type: fc.constant("refund" as const), payment: fc.nat(3), total: fc.integer({ min: 0, max: 1_200 }) }),
  fc.record({
    type: fc.constant("dispute" as const),
    dispute: fc.nat(2),
    close: fc.option(fc.constantFrom("won" as const, "lost" as const), { nil: undefined }),
  }),
  fc.record({ type: fc.constant("replay" as const), index: fc.nat(40) }),
  fc.record({
    type: fc.constant("redeem" as const),
    account: fc.nat(1),
    price: fc.integer({ min: 1, max: 800 }),
    quantity: fc.integer({ min: 1, max: 2 }),
    request: fc.nat(5),
  }),
  fc.record({ type: fc.constant("settle" as const), account: fc.nat(1), claimed: fc.boolean() }),
);

/**
 * The ledger's rules written the plain way, to compare with: each payment takes back from its account its
 * credits in proportion to what its refunded total and open and lost disputes return of its charge, rounded
 * up, at most all of them; a redemption spends credits only when the balance covers them, once per request
 * id; an unclaimed voucher that expires gives its credits back.
 */
class Model {
  payments = new Map<string, { account?: string; purchased: number; charged: number; refunded: number }>();
  disputes = new Map<string, { payment: string; credits: number; status: "open" | "won" | "lost" }>();
  requests = new Map<number, { account: string; quantity: number; price: number; status: "issued" | "claimed" | "expired" }>();

  payment(id: string) {
    const payment = this.payments.get(id) ?? { purchased: 0, charged: 0, refunded: 0 };
    this.payments.set(id, payment);
    return payment;
  }

  net(account: string): number {
    let net = 0;
    for (const [id, payment] of this.payments) {
      if (payment.account !== account) continue;
      const held = [...this.disputes.values()].filter((d) => d.payment === id && d.status !== "won").reduce((sum, d) => sum + d.credits, 0);
      const returned = Math.min(payment.charged, payment.refunded + held);
      net += payment.purchased - Math.ceil((payment.purchased * returned) / payment.charged);
    }
    for (const request of this.requests.values()) if (request.account === account && request.status !== "expired") net -= request.price;
    return net;
  }
}

describe("credits ledger: random sequences of purchases, refunds, disputes, replays and redemptions", function () {
  this.timeout(120_000);

  it("always reconciles, never goes below zero, never spends twice, and agrees with the plain rules", async function () {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 30 }), async (ops) => {
        const { db } = await connectCreditsDatabase(":memory:");
        try {
          const ledger = new Ledger(db);
          const model = new Model();
          const events: Array<{ id: string; apply: Apply }> = [];
          /** Handles a new Stripe event (or replays an earlier one, by its id); says whether it was a duplicate. */
          const stripe = async (apply: Apply, eventId?: string) => {
            const id = eventId ?? `evt_${events.length}`;
            if (eventId === undefined) events.push({ id, apply });
            return (await ledger.payments.handleEventOnce(id, "test", apply)).duplicate;
          };
          for (const step of ops) {
            if (step.type === "purchase") {
              const id = PAYMENTS[step.payment];
              const account = ACCOUNTS[step.account];
              const charged = step.credits + step.taxAndShipping;
              await stripe((trx) =>
                ledger.payments.purchase(trx, {
                  paymentIntent: id,
                  session: `cs_${id}`,
                  account,
                  credits: step.credits,
                  charged,
                  problem: null,
                }),
              );
              const payment = model.payment(id);
              if (payment.account === undefined) Object.assign(payment, { account, purchased: step.credits, charged });
            } else if (step.type === "refund") {
              const id = PAYMENTS[step.payment];
              const eventId = `evt_${events.length}`;
              await stripe((trx) => ledger.payments.refund(trx, { paymentIntent: id, refundedTotal: step.total, eventId }));
              const payment = model.payment(id);
              payment.refunded = Math.max(payment.refunded, step.total);
            } else if (step.type === "dispute") {
              const dispute = DISPUTES[step.dispute];
              await stripe((trx) =>
                step.close === undefined
                  ? ledger.payments.disputeOpened(trx, { paymentIntent: dispute.payment, disputeId: dispute.id, amount: dispute.amount })
                  : ledger.payments.disputeClosed(trx, {
                      paymentIntent: dispute.payment,
                      disputeId: dispute.id,
                      amount: dispute.amount,
                      won: step.close === "won",
                    }),
              );
              model.payment(dispute.payment);
              const known = model.disputes.get(dispute.id) ?? {
                payment: dispute.payment,
                credits: dispute.amount,
                status: "open" as const,
              };
              if (step.close !== undefined && known.status === "open") known.status = step.close;
              model.disputes.set(dispute.id, known);
            } else if (step.type === "replay") {
              if (events.length === 0) continue;
              const earlier = events[step.index % events.length];
              expect(await stripe(earlier.apply, earlier.id), "a replayed event is a duplicate").to.equal(true);
            } else if (step.type === "redeem") {
              const account = ACCOUNTS[step.account];
              const earlier = model.requests.get(step.request);
              // The same request again (its price may have changed since) is the first redemption; another under its id is refused.
              const sameRequest = earlier === undefined || (earlier.account === account && earlier.quantity === step.quantity);
              const canPay = Math.max(0, model.net(account)) >= step.price;
              const attempt = ledger.vouchers.redeem({
                account,
                requestId: `req_${step.request}`,
                itemId: 1,
                quantity: step.quantity,
                recipient: account,
                price: step.price,
                amount: BigInt(step.quantity),
                stock: undefined,
                sign: async () => ({
                  voucherId: `voucher_${step.request}`,
                  expiry: 100,
                  issuer: "0xissuer",
                  signature: "0x",
                  claimsContract: "0xclaims",
                  chainId: 1n,
                }),
              });
              if (earlier !== undefined) {
                if (sameRequest) expect((await attempt).replayed, "a repeated request is the first redemption").to.equal(true);
                else
                  await attempt.then(
                    () => expect.fail("a request id reused for another redemption"),
                    (error) => expect((error as CreditsError).status).to.equal(409),
                  );
              } else if (canPay) {
                expect((await attempt).replayed).to.equal(false);
                model.requests.set(step.request, { account, quantity: step.quantity, price: step.price, status: "issued" });
              } else {
                await attempt.then(
                  () => expect.fail("a redemption beyond the balance"),
                  (error) => expect((error as CreditsError).status).to.equal(402),
                );
              }
            } else {
              const account = ACCOUNTS[step.account];
              // Judged well past the vouchers' expiry (100) and the settlement margin.
              await ledger.vouchers.settle(account, {
                isClaimed: async () => step.claimed,
                settlementPoint: async () => ({ blockNumber: 7, timestamp: 100 + EXPIRY_SETTLE_MARGIN_SECONDS + 1 }),
              });
              for (const request of model.requests.values()) {
                if (request.account === account && request.status === "issued") request.status = step.claimed ? "claimed" : "expired";
              }
            }
            expect(await ledger.unreconciled(), "accounts whose movements do not add up").to.deep.equal([]);
            for (const account of ACCOUNTS) {
              const view = await ledger.account(account);
              expect(view.balance).to.be.at.least(0);
              expect(view.owed).to.be.at.least(0);
              expect(view.balance === 0 || view.owed === 0, "a balance and a debt at once").to.equal(true);
              expect(view.balance - view.owed, `${account} after ${JSON.stringify(step)}`).to.equal(model.net(account));
            }
          }
        } finally {
          await db.destroy();
        }
      }),
      { numRuns: 150 },
    );
  });
});

describe("credits ledger: payments recorded before refunds were measured against the charge", function () {
  it("keeps taking back one credit per credit's worth refunded for them, and measures later purchases against their charge", async function () {
    const dir = await mkdtemp(path.join(tmpdir(), "credits-migration-"));
    const file = path.join(dir, "credits.sqlite");
    const account = ACCOUNTS[0];
    try {
      // A ledger at the first migration, with a payment credited then and a refund that waits for its purchase.
      const first = await connectDatabase<CreditsSchema>(file, "credits database", () => ({
        "0001_credits_ledger": creditsMigrations()["0001_credits_ledger"],
      }));
      const row = { account, refunded: 0, disputed: 0, taken: 0, problem: null, created_at: "2025-01-01T00:00:00.000Z" };
      await first.db
        .insertInto("payments")
        .values([
          { ...row, payment_intent: "pi_old", checkout_session: "cs_old", purchased: 1_000 },
          {
            ...row,
            payment_intent: "pi_early",
            checkout_session: null,
            account: null,
            purchased: 0,
            refunded: 300,
          },
        ])
        .execute();
      await first.db.insertInto("credit_accounts").values({ account, balance: 1_000, owed: 0 }).execute();
      await first.db
        .insertInto("credit_movements")
        .values({ id: null, account, kind: "purchase", amount: 1_000, reference: "pi_old", created_at: row.created_at })
        .execute();
      await first.db.destroy();

      const { db } = await connectCreditsDatabase(file);
      try {
        const ledger = new Ledger(db);
        const charged = await db.selectFrom("payments").select(["payment_intent", "charged"]).orderBy("payment_intent").execute();
        expect(charged).to.deep.equal([
          { payment_intent: "pi_early", charged: null },
          { payment_intent: "pi_old", charged: 1_000 },
        ]);
        const apply = (id: string, run: Apply) => ledger.payments.handleEventOnce(id, "test", run);
        expect(
          (await apply("evt_1", (trx) => ledger.payments.refund(trx, { paymentIntent: "pi_old", refundedTotal: 400, eventId: "evt_1" })))
            .outcome,
        ).to.equal("debited 400");
        // The early refund's purchase arrives now: 900 credits of a 1,200 charge, 300 of it refunded: 225 back.
        expect(
          (
            await apply("evt_2", (trx) =>
              ledger.payments.purchase(trx, {
                paymentIntent: "pi_early",
                session: "cs_early",
                account,
                credits: 900,
                charged: 1_200,
                problem: null,
              }),
            )
          ).outcome,
        ).to.equal("credited 900");
        const view = await ledger.account(account);
        expect(view.movements.map((movement) => [movement.kind, movement.amount])).to.deep.equal([
          ["purchase", 1_000],
          ["refund", -400],
          ["purchase", 900],
          ["refund", -225],
        ]);
        expect(await ledger.unreconciled()).to.deep.equal([]);
      } finally {
        await db.destroy();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

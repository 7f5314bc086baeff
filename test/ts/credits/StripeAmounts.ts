import { randomBytes } from "node:crypto";

import { expect } from "chai";
import fc from "fast-check";
import type { Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";

import { loadCreditsConfig, stripeLivemode } from "../../../src/credits/config.ts";
import type { RunningCreditsService } from "../../../src/credits/main.ts";
import {
  chargeRefunded,
  checkoutCompleted,
  dispute,
  newPayment,
  postWebhook,
  type SimulatedPayment,
} from "../../../src/credits/stripe-simulator.ts";
import { creditsDomain, REDEMPTION_TYPES } from "@avn/protocol/credits/typed-data";
import { PRIMARY_ITEM, startCreditsFixture, TEST_WEBHOOK_SECRET, type CreditsFixture } from "../../helpers/credits.ts";

/** The catalogue's one item costs this many credits (test/helpers/credits.ts). */
const PRICE = 1_000;
const TAKE_BACK_KINDS = new Set(["refund", "dispute", "dispute_won"]);

/**
 * What a Stripe payment credits and what its refunds and disputes take back, through the webhook with
 * events signed by Stripe's own library: credits are what the buyer paid for them (after discounts,
 * without tax and shipping), and refunds and disputes take them back in proportion to what they return of
 * the charge, rounded up, so that a full refund takes back exactly every credit.
 */
describe("credits service: what a Stripe payment credits, and what its refunds and disputes take back", function () {
  this.timeout(180_000);
  let f: CreditsFixture;
  /** A second service on the same contract at 3 credits a cent, whose rounding differs. */
  let atThree: RunningCreditsService;

  before(async function () {
    f = await startCreditsFixture();
    atThree = await f.startService({ CREDITS_PER_MINOR_UNIT: "3" });
  });
  after(async function () {
    await atThree?.close();
    await f?.stop();
  });

  const buyer = () => {
    const account = privateKeyToAccount(generatePrivateKey());
    return { account, address: account.address.toLowerCase() };
  };
  const send = async (service: RunningCreditsService, body: object) => {
    const answer = await postWebhook(`${service.url}/credits/webhooks/stripe`, body, TEST_WEBHOOK_SECRET);
    expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
    return answer.body as { duplicate: boolean; outcome: string };
  };
  /** The account as the ledger holds it, and the credits its payment took back (refund and dispute movements). */
  const state = async (service: RunningCreditsService, address: string) => {
    const view = await service.ledger.account(address);
    const sum = (keep: (kind: string) => boolean) =>
      view.movements.filter((movement) => keep(movement.kind)).reduce((total, movement) => total + movement.amount, 0);
    expect(await service.ledger.unreconciled(), "accounts whose movements do not add up").to.deep.equal([]);
    return {
      balance: view.balance,
      owed: view.owed,
      purchased: sum((kind) => kind === "purchase"),
      taken: -sum((kind) => TAKE_BACK_KINDS.has(kind)),
    };
  };
  const redeem = async (service: RunningCreditsService, who: ReturnType<typeof buyer>) => {
    const requestId: Hex = `0x${randomBytes(32).toString("hex")}`;
    const message = {
      account: who.account.address,
      itemId: BigInt(PRIMARY_ITEM),
      quantity: 1n,
      maxPrice: BigInt(PRICE),
      recipient: who.account.address,
      requestId,
      issuedAt: BigInt(Math.floor(Date.now() / 1000)),
    };
    const signature = await who.account.signTypedData({
      domain: creditsDomain(900n, (await f.claims.getAddress()) as Hex),
      types: REDEMPTION_TYPES,
      primaryType: "CreditRedemption",
      message,
    });
    const response = await fetch(`${service.url}/credits/redemptions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        redemption: Object.fromEntries(Object.entries(message).map(([key, value]) => [key, value.toString()])),
        signature,
      }),
    });
    return response.status;
  };

  it("credits what a discounted checkout paid, not its subtotal, and a partial then a full refund take back exactly that", async function () {
    const who = buyer();
    const payment = newPayment();
    // The issue's case: items worth 10,000 cents, a promotion code takes 5,000 off, the buyer pays 5,000.
    const paid = { payment, account: who.address, amountMinor: 10_000, discountMinor: 5_000, currency: "usd" };
    expect((await send(f.service, checkoutCompleted(paid))).outcome).to.equal("credited 5000");
    expect(await state(f.service, who.address)).to.deep.equal({ balance: 5_000, owed: 0, purchased: 5_000, taken: 0 });
    const refund = (refundedMinor: number) => chargeRefunded({ payment, amountMinor: 5_000, refundedMinor, currency: "usd" });
    expect((await send(f.service, refund(2_000))).outcome).to.equal("debited 2000");
    expect(await state(f.service, who.address)).to.deep.equal({ balance: 3_000, owed: 0, purchased: 5_000, taken: 2_000 });
    expect((await send(f.service, refund(5_000))).outcome).to.equal("debited 3000");
    expect(await state(f.service, who.address)).to.deep.equal({ balance: 0, owed: 0, purchased: 5_000, taken: 5_000 });
  });

  it("credits neither tax nor shipping, and takes a refund back in proportion to the whole charge, rounded up", async function () {
    const who = buyer();
    const payment = newPayment();
    // 10,000 of items, 2,500 off, 600 of tax on top and 400 of shipping: charged 8,500, of which 7,500 bought credits.
    const body = checkoutCompleted({
      payment,
      account: who.address,
      amountMinor: 10_000,
      discountMinor: 2_500,
      taxMinor: 600,
      shippingMinor: 400,
      currency: "usd",
    });
    expect((body.data.object as { amount_total: number }).amount_total).to.equal(8_500);
    expect((await send(f.service, body)).outcome).to.equal("credited 7500");
    const refund = (refundedMinor: number) => chargeRefunded({ payment, amountMinor: 8_500, refundedMinor, currency: "usd" });
    // 1,000 of 8,500 back: 7,500 × 1,000 / 8,500 = 882.35… credits, rounded up.
    expect((await send(f.service, refund(1_000))).outcome).to.equal("debited 883");
    expect((await send(f.service, refund(8_500))).outcome).to.equal("debited 6617");
    expect(await state(f.service, who.address)).to.deep.equal({ balance: 0, owed: 0, purchased: 7_500, taken: 7_500 });

    // Tax included in the prices (the subtotal holds it): credits are still the total less the tax.
    const inclusive = buyer();
    const body2 = checkoutCompleted({
      payment: newPayment(),
      account: inclusive.address,
      amountMinor: 1_200,
      taxMinor: 200,
      taxInclusive: true,
      currency: "usd",
    });
    expect((await send(f.service, body2)).outcome).to.equal("credited 1000");
  });

  it("parks a checkout that paid nothing for credits or does not say what its total holds", async function () {
    const who = buyer();
    const free = checkoutCompleted({
      payment: newPayment(),
      account: who.address,
      amountMinor: 2_000,
      discountMinor: 2_000,
      currency: "usd",
    });
    expect((await send(f.service, free)).outcome).to.equal("not credited: nothing was paid for credits (a full discount)");
    const unexplained = checkoutCompleted({
      payment: newPayment(),
      account: who.address,
      amountMinor: 2_000,
      taxMinor: 100,
      currency: "usd",
    });
    (unexplained.data.object as { total_details: unknown }).total_details = null;
    expect((await send(f.service, unexplained)).outcome).to.equal(
      "not credited: the checkout's total differs from its subtotal and states no tax or shipping",
    );
    expect(await state(f.service, who.address)).to.deep.equal({ balance: 0, owed: 0, purchased: 0, taken: 0 });
  });

  it("owes what a refund of a discounted purchase takes beyond the balance, and the next purchase pays it first", async function () {
    const who = buyer();
    const payment = newPayment();
    // 3,000 of items at half price: 1,500 credits; one item bought (1,000), then the whole charge refunded.
    await send(f.service, checkoutCompleted({ payment, account: who.address, amountMinor: 3_000, discountMinor: 1_500, currency: "usd" }));
    expect(await redeem(f.service, who)).to.equal(200);
    expect(
      (await send(f.service, chargeRefunded({ payment, amountMinor: 1_500, refundedMinor: 1_500, currency: "usd" }))).outcome,
    ).to.equal("debited 1500");
    expect(await state(f.service, who.address)).to.deep.equal({ balance: 0, owed: 1_000, purchased: 1_500, taken: 1_500 });
    await send(f.service, checkoutCompleted({ payment: newPayment(), account: who.address, amountMinor: 1_200, currency: "usd" }));
    expect(await state(f.service, who.address)).to.deep.equal({ balance: 200, owed: 0, purchased: 2_700, taken: 1_500 });
  });

  describe("random discounts, taxes, shipping and sequences of refunds and disputes", function () {
    type Step =
      | { type: "refund"; permille: number }
      | { type: "dispute"; id: number }
      | { type: "close"; id: number; won: boolean }
      | { type: "redeem" }
      | { type: "replay"; index: number };
    const step: fc.Arbitrary<Step> = fc.oneof(
      { arbitrary: fc.record({ type: fc.constant("refund" as const), permille: fc.integer({ min: 1, max: 1_000 }) }), weight: 3 },
      fc.record({ type: fc.constant("dispute" as const), id: fc.nat(1) }),
      fc.record({ type: fc.constant("close" as const), id: fc.nat(1), won: fc.boolean() }),
      fc.record({ type: fc.constant("redeem" as const) }),
      fc.record({ type: fc.constant("replay" as const), index: fc.nat(20) }),
    );
    const scenario = fc.record({
      atThree: fc.boolean(),
      /** Minor units paid for credits; the rest of the checkout is built around it. */
      net: fc.integer({ min: 1, max: 6_000 }),
      discount: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 10_000 })),
      tax: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 2_000 })),
      taxInclusive: fc.boolean(),
      shipping: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 1_000 })),
      /** Each dispute's share of the charge, in thousandths. */
      disputes: fc.tuple(fc.integer({ min: 1, max: 1_000 }), fc.integer({ min: 1, max: 1_000 })),
      steps: fc.array(step, { maxLength: 8 }),
      /** How many steps Stripe delivers before the checkout itself (it does not order its events). */
      purchaseAt: fc.nat(8),
    });

    it("credits what was paid for credits, takes back in proportion, owes what the balance lacks, and reconciles at each step", async function () {
      await fc.assert(
        fc.asyncProperty(scenario, async (s) => {
          const service = s.atThree ? atThree : f.service;
          const rate = s.atThree ? 3 : 1;
          const who = buyer();
          const payment: SimulatedPayment = newPayment();
          const run = randomBytes(6).toString("hex");
          // What Stripe's checkout states: the subtotal holds inclusive tax; the total is after the discount.
          const subtotal = s.net + s.discount + (s.taxInclusive ? s.tax : 0);
          const charged = s.net + s.tax + s.shipping;
          const purchased = s.net * rate;
          const disputeAmounts = s.disputes.map((permille) => Math.max(1, Math.floor((charged * permille) / 1_000)));

          // The plain rules: a payment takes back ceil(purchased × returned / charged), at most all of it.
          const model = { delivered: false, refunded: 0, spent: 0, disputes: new Map<number, "open" | "won" | "lost">() };
          const returned = () =>
            Math.min(
              charged,
              model.refunded +
                [...model.disputes].filter(([, status]) => status !== "won").reduce((sum, [id]) => sum + disputeAmounts[id], 0),
            );
          const expectedTaken = () =>
            model.delivered ? Number((BigInt(purchased) * BigInt(returned()) + BigInt(charged - 1)) / BigInt(charged)) : 0;
          const net = () => (model.delivered ? purchased - expectedTaken() : 0) - model.spent;

          const sent: object[] = [];
          const check = async (what: string) => {
            const now = await state(service, who.address);
            const context = `${what} in ${JSON.stringify(s)}`;
            expect(now.purchased, context).to.equal(model.delivered ? purchased : 0);
            expect(now.taken, context).to.equal(expectedTaken());
            // Rounded up by less than a credit: every credit kept is paid for by money kept.
            if (model.delivered && returned() < charged) {
              expect(BigInt(now.taken) * BigInt(charged) >= BigInt(purchased) * BigInt(returned()), context).to.equal(true);
              expect(BigInt(now.taken - 1) * BigInt(charged) < BigInt(purchased) * BigInt(returned()) || now.taken === 0, context).to.equal(
                true,
              );
            }
            expect([now.balance, now.owed], context).to.deep.equal([Math.max(0, net()), Math.max(0, -net())]);
          };
          const deliver = async (body: object) => {
            sent.push(body);
            const answer = await send(service, body);
            expect(answer.duplicate).to.equal(false);
          };
          const refundTo = async (totalMinor: number) => {
            model.refunded = totalMinor;
            await deliver(chargeRefunded({ payment, amountMinor: charged, refundedMinor: totalMinor, currency: "usd" }));
          };

          const plan: Array<Step | { type: "purchase" }> = [...s.steps];
          plan.splice(Math.min(s.purchaseAt, plan.length), 0, { type: "purchase" });
          for (const next of plan) {
            if (next.type === "purchase") {
              model.delivered = true;
              await deliver(
                checkoutCompleted({
                  payment,
                  account: who.address,
                  amountMinor: subtotal,
                  discountMinor: s.discount,
                  taxMinor: s.tax,
                  taxInclusive: s.taxInclusive,
                  shippingMinor: s.shipping,
                  currency: "usd",
                }),
              );
            } else if (next.type === "refund") {
              await refundTo(Math.min(charged, model.refunded + Math.ceil((charged * next.permille) / 1_000)));
            } else if (next.type === "dispute" || next.type === "close") {
              const closed = next.type === "close" ? (next.won ? "won" : "lost") : undefined;
              const status = model.disputes.get(next.id);
              if (status === undefined || (status === "open" && closed !== undefined)) model.disputes.set(next.id, closed ?? "open");
              await deliver(
                dispute({ payment, disputeId: `dp_${run}_${next.id}`, amountMinor: disputeAmounts[next.id], currency: "usd", closed }),
              );
            } else if (next.type === "redeem") {
              const canPay = net() >= PRICE;
              expect(await redeem(service, who)).to.equal(canPay ? 200 : 402);
              if (canPay) model.spent += PRICE;
            } else {
              if (sent.length === 0) continue;
              const earlier = sent[next.index % sent.length];
              expect((await send(service, earlier)).duplicate, "a replayed event").to.equal(true);
            }
            await check(next.type);
          }
          // The whole charge refunded at last: every credit the payment gave is taken back, exactly.
          await refundTo(charged);
          await check("the full refund");
          const end = await state(service, who.address);
          expect([end.purchased, end.taken]).to.deep.equal([purchased, purchased]);
          expect(end.balance - end.owed).to.equal(-model.spent);
        }),
        { numRuns: 60 },
      );
    });
  });

  describe("Stripe's mode", function () {
    it("refuses a live-mode event on a test-mode service with 400 and records nothing, then applies the test-mode one", async function () {
      const who = buyer();
      const payment = newPayment();
      const live = checkoutCompleted({ payment, account: who.address, amountMinor: 700, currency: "usd", livemode: true });
      for (let attempt = 0; attempt < 2; attempt++) {
        // Refused each time (not recorded as handled, so never answered as a replay).
        const refused = await postWebhook(f.webhookUrl, live, TEST_WEBHOOK_SECRET);
        expect([refused.status, refused.body.message]).to.deep.equal([
          400,
          "A live-mode event, but this service takes test-mode events (STRIPE_MODE, STRIPE_SECRET_KEY): nothing changed",
        ]);
      }
      // A live event whose object says test (or the reverse) is refused too.
      const mixed = checkoutCompleted({ payment, account: who.address, amountMinor: 700, currency: "usd" });
      (mixed.data.object as { livemode: boolean }).livemode = true;
      expect((await postWebhook(f.webhookUrl, mixed, TEST_WEBHOOK_SECRET)).status).to.equal(400);
      expect(await state(f.service, who.address)).to.deep.equal({ balance: 0, owed: 0, purchased: 0, taken: 0 });
      const test = checkoutCompleted({ payment, account: who.address, amountMinor: 700, currency: "usd" });
      expect((await send(f.service, test)).outcome).to.equal("credited 700");
    });

    it("takes live-mode events only on a service configured with a live key, refusing test-mode refunds there", async function () {
      const service = await f.startService({ STRIPE_SECRET_KEY: `sk_live_${randomBytes(12).toString("hex")}` });
      try {
        const who = buyer();
        const payment = newPayment();
        expect(
          (await send(service, checkoutCompleted({ payment, account: who.address, amountMinor: 900, currency: "usd", livemode: true })))
            .outcome,
        ).to.equal("credited 900");
        const testRefund = chargeRefunded({ payment, amountMinor: 900, refundedMinor: 900, currency: "usd" });
        const refused = await postWebhook(`${service.url}/credits/webhooks/stripe`, testRefund, TEST_WEBHOOK_SECRET);
        expect([refused.status, refused.body.message]).to.deep.equal([
          400,
          "A test-mode event, but this service takes live-mode events (STRIPE_MODE, STRIPE_SECRET_KEY): nothing changed",
        ]);
        expect(await state(service, who.address)).to.deep.equal({ balance: 900, owed: 0, purchased: 900, taken: 0 });
      } finally {
        await service.close();
      }
    });

    it("reads the mode from STRIPE_MODE or the key, refuses a contradiction, and never echoes the key", function () {
      const base = {
        STRIPE_WEBHOOK_SECRET: TEST_WEBHOOK_SECRET,
        CREDITS_CATALOGUE: "catalogue.json",
        CREDITS_ISSUER_KEY: `0x${"11".repeat(32)}`,
        CREDITS_L2_RPC_URL: "http://127.0.0.1:8545",
        CREDITS_CLAIMS_CONTRACT: "0x2279B7A0a67DB372996a5FaB50D91eAA73d2eBe6",
      };
      expect(stripeLivemode(loadCreditsConfig(base))).to.equal(false);
      expect(stripeLivemode(loadCreditsConfig({ ...base, STRIPE_MODE: "live" }))).to.equal(true);
      expect(stripeLivemode(loadCreditsConfig({ ...base, STRIPE_SECRET_KEY: "rk_live_abc" }))).to.equal(true);
      expect(stripeLivemode(loadCreditsConfig({ ...base, STRIPE_SECRET_KEY: "sk_test_abc", STRIPE_MODE: "test" }))).to.equal(false);
      expect(() => loadCreditsConfig({ ...base, STRIPE_SECRET_KEY: "sk_test_abc", STRIPE_MODE: "live" })).to.throw(
        "STRIPE_MODE: live, but STRIPE_SECRET_KEY is a test-mode key",
      );
      const unshaped = "pk_live_not_a_secret_key_123";
      expect(() => loadCreditsConfig({ ...base, STRIPE_SECRET_KEY: unshaped }))
        .to.throw(/STRIPE_SECRET_KEY: a Stripe key/)
        .that.satisfies((error: Error) => !error.message.includes(unshaped));
    });
  });
});

import { randomBytes } from "node:crypto";

import Stripe from "stripe";

/**
 * Stripe's side of the credits channel, for the local stack and the tests: events shaped as Stripe sends
 * them (the fields the credits service reads, with Stripe's names), signed with the endpoint's secret by
 * Stripe's own library as its CLI (`stripe trigger`) does, and posted to the webhook.
 */
export interface SimulatedPayment {
  paymentIntent: string;
  checkoutSession: string;
}

export function newPayment(): SimulatedPayment {
  const id = randomBytes(12).toString("hex");
  return { paymentIntent: `pi_local_${id}`, checkoutSession: `cs_local_${id}` };
}

/**
 * A `checkout.session.completed` event: `account` bought items worth `amountMinor` minor units of
 * `currency` (the subtotal), less `discountMinor`, plus `shippingMinor` and `taxMinor` (added to the total,
 * or already in the subtotal when `taxInclusive`), as Stripe states them in `total_details`.
 */
export function checkoutCompleted(input: {
  payment: SimulatedPayment;
  account: string;
  amountMinor: number;
  currency: string;
  paid?: boolean;
  metadata?: Record<string, string>;
  discountMinor?: number;
  taxMinor?: number;
  taxInclusive?: boolean;
  shippingMinor?: number;
  livemode?: boolean;
}) {
  const [discount, tax, shipping] = [input.discountMinor ?? 0, input.taxMinor ?? 0, input.shippingMinor ?? 0];
  return event(
    "checkout.session.completed",
    {
      id: input.payment.checkoutSession,
      object: "checkout.session",
      client_reference_id: input.account,
      amount_subtotal: input.amountMinor,
      amount_total: input.amountMinor - discount + shipping + (input.taxInclusive === true ? 0 : tax),
      total_details: { amount_discount: discount, amount_shipping: shipping, amount_tax: tax },
      livemode: input.livemode ?? false,
      // What the service's own checkout sets (the webhook credits only such sessions).
      metadata: input.metadata ?? { purpose: "credits" },
      currency: input.currency,
      mode: "payment",
      payment_status: input.paid === false ? "unpaid" : "paid",
      payment_intent: input.payment.paymentIntent,
      status: "complete",
    },
    input.livemode,
  );
}

/**
 * A `charge.refunded` event: `amountMinor` is what the charge took (the checkout's `amount_total`),
 * `refundedMinor` its refunded total so far, as Stripe states it.
 */
export function chargeRefunded(input: {
  payment: SimulatedPayment;
  amountMinor: number;
  refundedMinor: number;
  currency: string;
  livemode?: boolean;
}) {
  return event(
    "charge.refunded",
    {
      id: `ch_${input.payment.paymentIntent.slice(3)}`,
      object: "charge",
      amount: input.amountMinor,
      amount_refunded: input.refundedMinor,
      currency: input.currency,
      livemode: input.livemode ?? false,
      payment_intent: input.payment.paymentIntent,
      refunded: input.refundedMinor >= input.amountMinor,
    },
    input.livemode,
  );
}

/** A dispute event: opened (`charge.dispute.created`) or closed with `status` won or lost. */
export function dispute(input: {
  payment: SimulatedPayment;
  disputeId: string;
  amountMinor: number;
  currency: string;
  closed?: "won" | "lost";
  livemode?: boolean;
}) {
  return event(
    input.closed === undefined ? "charge.dispute.created" : "charge.dispute.closed",
    {
      id: input.disputeId,
      object: "dispute",
      amount: input.amountMinor,
      currency: input.currency,
      livemode: input.livemode ?? false,
      payment_intent: input.payment.paymentIntent,
      charge: `ch_${input.payment.paymentIntent.slice(3)}`,
      status: input.closed ?? "needs_response",
    },
    input.livemode,
  );
}

/** Any event of `type` with `object` as its data (the service ignores types it does not handle); test mode unless `livemode`. */
export function event(type: string, object: Record<string, unknown>, livemode = false) {
  return {
    id: `evt_local_${randomBytes(12).toString("hex")}`,
    object: "event",
    api_version: "2025-01-27.acacia",
    created: Math.floor(Date.now() / 1000),
    livemode,
    pending_webhooks: 1,
    type,
    data: { object },
  };
}

/** The `Stripe-Signature` header Stripe would send with `payload` (optionally dated `timestamp`, in seconds). */
export function stripeSignature(payload: string, secret: string, timestamp?: number): string {
  return Stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp });
}

/** Posts `eventBody` to the webhook at `url`, signed with `secret`; returns the HTTP status and the answer. */
export async function postWebhook(
  url: string,
  eventBody: object,
  secret: string,
  options: { timestamp?: number; tamper?: (payload: string) => string } = {},
) {
  const payload = JSON.stringify(eventBody);
  const signature = stripeSignature(payload, secret, options.timestamp);
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", "stripe-signature": signature },
    body: options.tamper === undefined ? payload : options.tamper(payload),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

import { getAddress, ZeroAddress } from "ethers";
import Stripe from "stripe";

import { CreditsError } from "./errors.ts";
import type { Ledger } from "./ledger.ts";

export interface PaymentSettings {
  currency: string;
  creditsPerMinorUnit: number;
  /** The Stripe mode this service takes events from: live (true) or test (false). */
  livemode: boolean;
}

/**
 * The event a webhook request carries, once Stripe's signature over its exact bytes and its timestamp
 * (at most `toleranceSeconds` old) are checked with Stripe's own library. Anything else is a 400 that
 * changes nothing: a forged, altered, replayed-late or unsigned request never reaches the ledger.
 */
export function verifiedStripeEvent(
  rawBody: Buffer,
  signature: string | undefined,
  secret: string,
  toleranceSeconds: number,
): Stripe.Event {
  if (signature === undefined || signature === "") throw new CreditsError(400, "Missing Stripe-Signature header");
  try {
    return Stripe.webhooks.constructEvent(rawBody, signature, secret, toleranceSeconds);
  } catch (error) {
    // Stripe's message says which check failed (no matching signature, timestamp outside tolerance); it holds no secret.
    throw new CreditsError(400, `Webhook signature check failed: ${(error as Error).message.split(".")[0]}`);
  }
}

/**
 * Applies a verified Stripe event to the ledger, once per event id (a replay returns the first outcome):
 * - `checkout.session.completed` (when paid) and `checkout.session.async_payment_succeeded` credit the
 *   claim account the checkout carried as its `client_reference_id` (a wallet address) with what the
 *   buyer paid for credits (`sessionAmounts`: after discounts, without tax and shipping) at the configured
 *   rate, in the configured currency;
 * - `charge.refunded` and `charge.dispute.created` take back the payment's credits in proportion to what
 *   they return of the charge; `charge.dispute.closed` gives a dispute's part back when won;
 * - every other type is acknowledged and ignored.
 * An event of the other Stripe mode (live against a test configuration, or the reverse) is refused (400)
 * before anything is recorded: it belongs to another ledger.
 */
export async function applyStripeEvent(
  ledger: Ledger,
  event: Stripe.Event,
  settings: PaymentSettings,
): Promise<{ duplicate: boolean; outcome: string }> {
  const objectMode = (event.data.object as { livemode?: unknown }).livemode;
  if (event.livemode !== settings.livemode || (typeof objectMode === "boolean" && objectMode !== settings.livemode)) {
    throw new CreditsError(
      400,
      `A ${modeName(!settings.livemode)}-mode event, but this service takes ${modeName(settings.livemode)}-mode events (STRIPE_MODE, STRIPE_SECRET_KEY): nothing changed`,
    );
  }
  return ledger.payments.handleEventOnce(event.id, event.type, async (trx) => {
    switch (event.type) {
      case "checkout.session.completed":
      case "checkout.session.async_payment_succeeded": {
        const session = event.data.object;
        // The same Stripe account may sell other things: only sessions this service opened (or marked so) are credits.
        if (session.mode !== "payment" || session.metadata?.purpose !== "credits") return "ignored: not a credits checkout";
        if (session.payment_status !== "paid") return `awaiting payment (${session.payment_status})`;
        const paymentIntent = idOf(session.payment_intent) ?? `session:${session.id}`;
        const { account, problem: accountProblem } = claimAccountOf(session.client_reference_id);
        const amounts = sessionAmounts(session);
        const problem =
          accountProblem ??
          (session.currency !== settings.currency ? `paid in ${session.currency ?? "no currency"}, not ${settings.currency}` : null) ??
          amounts.problem;
        return ledger.payments.purchase(trx, {
          paymentIntent,
          session: session.id,
          account,
          credits: credits(amounts.forCredits, settings),
          charged: credits(amounts.charged, settings),
          problem,
        });
      }
      case "charge.refunded": {
        const charge = event.data.object;
        const paymentIntent = idOf(charge.payment_intent);
        if (paymentIntent === undefined) return "ignored: a charge without a payment intent";
        if (charge.currency !== settings.currency) return `ignored: a refund in ${charge.currency}, not ${settings.currency}`;
        return ledger.payments.refund(trx, { paymentIntent, refundedTotal: credits(charge.amount_refunded, settings), eventId: event.id });
      }
      case "charge.dispute.created": {
        const dispute = event.data.object;
        const paymentIntent = idOf(dispute.payment_intent);
        if (paymentIntent === undefined) return "ignored: a dispute without a payment intent";
        if (dispute.currency !== settings.currency) return `ignored: a dispute in ${dispute.currency}, not ${settings.currency}`;
        return ledger.payments.disputeOpened(trx, { paymentIntent, disputeId: dispute.id, amount: credits(dispute.amount, settings) });
      }
      case "charge.dispute.closed": {
        const dispute = event.data.object;
        const paymentIntent = idOf(dispute.payment_intent);
        if (paymentIntent === undefined) return "ignored: a dispute without a payment intent";
        if (dispute.currency !== settings.currency) return `ignored: a dispute in ${dispute.currency}, not ${settings.currency}`;
        // An inquiry closed without becoming a dispute took nothing for good: like a dispute won.
        const won = dispute.status === "won" || dispute.status === "warning_closed";
        return ledger.payments.disputeClosed(trx, {
          paymentIntent,
          disputeId: dispute.id,
          amount: credits(dispute.amount, settings),
          won,
        });
      }
      default:
        return "ignored";
    }
  });
}

/**
 * What a paid session charged (`amount_total`: after discounts, with tax and shipping) and what of it paid
 * for credits: `amount_total` less `total_details.amount_tax` (exclusive and inclusive tax alike) and
 * `amount_shipping`, in minor units. Never `amount_subtotal`, which is before discounts (and holds
 * inclusive tax): a promotion code that halves the price halves the credits. A session that states no
 * total, no breakdown of one that differs from its subtotal, or nothing paid for credits is parked with
 * `problem`.
 */
export function sessionAmounts(session: Pick<Stripe.Checkout.Session, "amount_subtotal" | "amount_total" | "total_details">): {
  charged: number;
  forCredits: number;
  problem: string | null;
} {
  const total = session.amount_total;
  if (total === null || !Number.isSafeInteger(total) || total < 0) {
    return { charged: 0, forCredits: 0, problem: "the checkout states no amount_total" };
  }
  const details = session.total_details;
  if (details === null || details === undefined) {
    // Without a breakdown, the total may hold tax: only a total equal to the subtotal is known to be all for credits.
    if (session.amount_subtotal === total) return { charged: total, forCredits: total, problem: null };
    return { charged: total, forCredits: 0, problem: "the checkout's total differs from its subtotal and states no tax or shipping" };
  }
  const [tax, shipping] = [details.amount_tax, details.amount_shipping ?? 0];
  const forCredits = total - tax - shipping;
  if (!Number.isSafeInteger(forCredits) || forCredits < 0 || tax < 0 || shipping < 0) {
    return { charged: total, forCredits: 0, problem: "the checkout's tax and shipping are not parts of its total" };
  }
  if (forCredits === 0) return { charged: total, forCredits: 0, problem: "nothing was paid for credits (a full discount)" };
  return { charged: total, forCredits, problem: null };
}

/**
 * The claim account a checkout names: a wallet address written with its checksum (as this service's
 * checkout writes it) or all in one case; a mistyped checksum, or the zero address, parks the payment.
 */
function claimAccountOf(reference: string | null): { account: string | null; problem: string | null } {
  if (reference === null || !/^0x[0-9a-fA-F]{40}$/.test(reference)) {
    return { account: null, problem: "the checkout carried no claim account (client_reference_id must be a wallet address)" };
  }
  let account: string;
  try {
    account = getAddress(reference).toLowerCase(); // throws on a mixed-case address whose checksum is wrong
  } catch {
    return { account: null, problem: "the checkout's client_reference_id has a wrong checksum (a mistyped address)" };
  }
  if (account === ZeroAddress) return { account: null, problem: "the checkout's claim account is the zero address" };
  return { account, problem: null };
}

function credits(minorUnits: number, settings: PaymentSettings): number {
  const value = minorUnits * settings.creditsPerMinorUnit;
  if (!Number.isSafeInteger(value) || value < 0) throw new CreditsError(400, `An amount of ${minorUnits} gives no whole number of credits`);
  return value;
}

function modeName(livemode: boolean): string {
  return livemode ? "live" : "test";
}

function idOf(reference: string | { id: string } | null | undefined): string | undefined {
  if (reference === null || reference === undefined) return undefined;
  return typeof reference === "string" ? reference : reference.id;
}

import cors from "@fastify/cors";
import { getAddress, isAddress, ZeroAddress } from "ethers";
import Fastify, { type FastifyInstance, type FastifyReply } from "fastify";
import type { Logger } from "pino";
import type Stripe from "stripe";
import type { Address } from "viem";
import { z } from "zod";

import type { Catalogue, CatalogueItem } from "./catalogue.ts";
import { stripeLivemode, type CreditsConfig } from "./config.ts";
import type { VoucherIssuer } from "./issuer.ts";
import { CreditsError } from "./errors.ts";
import type { Ledger } from "./ledger.ts";
import type { ClaimsReader, VoucherRow } from "./voucher-book.ts";
import { redemptionBody, verifiedRedemption, type RedemptionVerifier } from "./redemptions.ts";
import { applyStripeEvent, verifiedStripeEvent } from "./stripe-events.ts";
import { voucherToJson } from "@avn/protocol/credits/typed-data";

/** What the service reads of the claim platform beyond settlement (ClaimsChain in production). */
export interface CreditsChain extends ClaimsReader {
  status(): Promise<{ issuer: string; paused: boolean }>;
  stock(item: CatalogueItem): Promise<{ pool: string; available: bigint } | undefined>;
  verifyRedemption: RedemptionVerifier;
}

export interface CreditsServerParts {
  config: CreditsConfig;
  ledger: Ledger;
  catalogue: Catalogue;
  issuer: VoucherIssuer;
  chain: CreditsChain;
  chainId: bigint;
  /** Stripe's API client, when a secret key is configured (Checkout sessions). */
  stripe?: Stripe;
  log: Logger;
}

/** Webhook bodies up to this size (Stripe's events are a few kilobytes). */
const WEBHOOK_BODY_LIMIT = 256 * 1024;

/** The most credits one Checkout session sells (a guard against typos and abuse, well above any real basket). */
const MAX_CHECKOUT_CREDITS = 100_000_000;

const checkoutBody = z
  .object({
    account: z.string(),
    credits: z.number().int().positive().max(MAX_CHECKOUT_CREDITS),
  })
  .strict();

/**
 * The credits service's HTTP face, under `/credits`:
 * - `POST /webhooks/stripe`: Stripe's events, checked and applied to the ledger once each;
 * - `GET /catalogue`: the items and their prices in credits;
 * - `GET /accounts/:account`: a claim account's credits, movements and vouchers (their state brought up to
 *   date with the chain first: claimed, or expired with their credits back);
 * - `POST /redemptions`: spends credits on an item, as the account's wallet signed it, and returns the voucher;
 * - `POST /checkout`: opens a Stripe Checkout session for a claim account (with a Stripe secret key only);
 * - `GET /healthz`.
 * Errors are `{"status": N, "message": "…"}` with the same N as the HTTP status, and never hold a secret.
 */
export async function buildCreditsServer(parts: CreditsServerParts): Promise<FastifyInstance> {
  const { config, ledger, catalogue, issuer, chain, log } = parts;
  const app = Fastify({ loggerInstance: log, bodyLimit: 16 * 1024 }) as unknown as FastifyInstance;
  // Only JSON bodies: without this, text/plain would be parsed.
  app.removeContentTypeParser("text/plain");
  const origins = config.CREDITS_ALLOWED_ORIGINS;
  await app.register(cors, { origin: origins.includes("*") ? "*" : origins.length === 0 ? false : origins, methods: ["GET", "POST"] });

  app.setErrorHandler((error, _request, reply) => {
    if (error instanceof CreditsError) return envelope(reply, error.status, error.message);
    const status = (error as { statusCode?: number }).statusCode;
    if (status !== undefined && status >= 400 && status < 500) return envelope(reply, status, (error as Error).message);
    log.error({ err: { type: (error as Error).name } }, "unexpected error");
    return envelope(reply, 500, "Internal error");
  });
  app.setNotFoundHandler((_request, reply) => envelope(reply, 404, "Not found"));

  // Stripe signs the exact bytes it sent: this route reads its body raw, in its own scope.
  await app.register(async (scope) => {
    scope.addContentTypeParser("application/json", { parseAs: "buffer", bodyLimit: WEBHOOK_BODY_LIMIT }, (_request, body, done) =>
      done(null, body),
    );
    const settings = {
      currency: config.CREDITS_CURRENCY,
      creditsPerMinorUnit: config.CREDITS_PER_MINOR_UNIT,
      livemode: stripeLivemode(config),
    };
    scope.post("/credits/webhooks/stripe", async (request) => {
      try {
        if (!Buffer.isBuffer(request.body)) throw new CreditsError(400, "The webhook body must be JSON");
        const event = verifiedStripeEvent(
          request.body,
          request.headers["stripe-signature"] as string | undefined,
          config.STRIPE_WEBHOOK_SECRET,
          config.STRIPE_WEBHOOK_TOLERANCE_SECONDS,
        );
        const { duplicate, outcome } = await applyStripeEvent(ledger, event, settings);
        request.log.info({ event: event.id, type: event.type, duplicate, outcome }, "stripe event");
        return { received: true, duplicate, outcome };
      } catch (error) {
        // Stripe retries a refused event and shows the failure on the endpoint; the log says why (no secret in it).
        if (error instanceof CreditsError) request.log.warn({ status: error.status, reason: error.message }, "stripe event refused");
        throw error;
      }
    });
  });

  app.get("/credits/healthz", async () => ({ status: "ok" }));

  app.get("/credits/catalogue", async () => ({
    claimsContract: config.CREDITS_CLAIMS_CONTRACT,
    chainId: parts.chainId.toString(),
    currency: config.CREDITS_CURRENCY,
    creditsPerMinorUnit: config.CREDITS_PER_MINOR_UNIT,
    items: catalogue.items,
  }));

  const settlements = new SettlementQueue();
  app.get<{ Params: { account: string } }>("/credits/accounts/:account", async (request) => {
    const account = claimAccount(request.params.account);
    // The ledger answers even when the L2 does not: `settled` says whether the vouchers were just checked.
    let settled = true;
    try {
      await settlements.run(account, () => ledger.vouchers.settle(account, chain));
    } catch (error) {
      settled = false;
      request.log.warn({ account, err: { type: (error as Error).name } }, "vouchers not settled: the L2 did not answer");
    }
    const view = await ledger.account(account);
    return {
      ...view,
      settled,
      vouchers: (await ledger.vouchers.of(account)).map((voucher) => voucherView(voucher, config.CREDITS_CLAIMS_CONTRACT)),
    };
  });

  app.post("/credits/redemptions", async (request) => {
    const parsed = redemptionBody.safeParse(request.body);
    if (!parsed.success)
      throw new CreditsError(
        400,
        `Invalid redemption: ${parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; ")}`,
      );
    const redemption = await verifiedRedemption(parsed.data, {
      chainId: parts.chainId,
      claimsContract: config.CREDITS_CLAIMS_CONTRACT as Address,
      nowSeconds: Math.floor(Date.now() / 1000),
      maxSkewSeconds: config.REDEMPTION_MAX_SKEW_SECONDS,
      verify: (domain, message, signature) => chain.verifyRedemption(domain, message, signature),
    });
    const item = itemOf(catalogue, redemption.itemId);
    if (redemption.quantity < 1n || redemption.quantity > BigInt(item.maxQuantity)) {
      throw new CreditsError(400, `Ask for 1 to ${item.maxQuantity} of ${item.name}`);
    }
    const quantity = Number(redemption.quantity);
    const account = redemption.account.toLowerCase();
    const terms = { account, requestId: redemption.requestId, itemId: item.id, quantity, recipient: redemption.recipient };
    // A request made already answers its voucher whatever the chain or the prices say now.
    const earlier = await ledger.vouchers.earlierRedemption(terms);
    if (earlier !== undefined) {
      request.log.info({ account, item: item.id, quantity, voucher: earlier.voucherId, replayed: true }, "redemption");
      return { ...voucherView(earlier, config.CREDITS_CLAIMS_CONTRACT), replayed: true };
    }
    const price = BigInt(item.priceCredits) * redemption.quantity;
    if (price > BigInt(Number.MAX_SAFE_INTEGER))
      throw new CreditsError(400, `${quantity} of ${item.name} cost more credits than an account can hold`);
    if (price > redemption.maxPrice) {
      throw new CreditsError(
        409,
        `The price changed: ${quantity} of ${item.name} now cost ${price} credits, more than the ${redemption.maxPrice} you signed for`,
      );
    }
    await refuseWhenUnclaimable(chain, issuer.address);
    // Read from the chain before the ledger's transaction: it holds the ledger only for local work.
    const [stock, point] = await Promise.all([chain.stock(item), chain.settlementPoint()]);
    const expiry = point.timestamp + config.VOUCHER_TTL_SECONDS;
    const amount = BigInt(item.amountPerUnit) * redemption.quantity;
    const { voucher, replayed } = await ledger.vouchers.redeem({
      ...terms,
      price: Number(price),
      amount,
      stock,
      sign: async () => {
        const issued = await issuer.issue({ recipient: redemption.recipient, itemId: BigInt(item.id), amount, expiry: BigInt(expiry) });
        return {
          voucherId: issued.voucher.voucherId,
          expiry,
          issuer: issuer.address,
          signature: issued.signature,
          claimsContract: config.CREDITS_CLAIMS_CONTRACT,
          chainId: parts.chainId,
        };
      },
    });
    request.log.info({ account, item: item.id, quantity, voucher: voucher.voucherId, replayed }, "redemption");
    return { ...voucherView(voucher, config.CREDITS_CLAIMS_CONTRACT), replayed };
  });

  app.post("/credits/checkout", async (request) => {
    if (parts.stripe === undefined || config.CREDITS_CHECKOUT_RETURN_URL === undefined) {
      throw new CreditsError(501, "Checkout is not configured on this service (STRIPE_SECRET_KEY and CREDITS_CHECKOUT_RETURN_URL)");
    }
    const parsed = checkoutBody.safeParse(request.body);
    if (!parsed.success)
      throw new CreditsError(
        400,
        `Invalid checkout: ${parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; ")}`,
      );
    const account = claimAccount(parsed.data.account);
    if (account === ZeroAddress) throw new CreditsError(400, "A claim account cannot be the zero address");
    const { credits } = parsed.data;
    if (credits % config.CREDITS_PER_MINOR_UNIT !== 0)
      throw new CreditsError(400, `credits must be a whole multiple of ${config.CREDITS_PER_MINOR_UNIT}`);
    let session: Stripe.Checkout.Session;
    try {
      session = await parts.stripe.checkout.sessions.create({
        mode: "payment",
        client_reference_id: getAddress(account),
        // The webhook credits only sessions marked so: other checkouts of the same Stripe account are not credits.
        metadata: { purpose: "credits" },
        line_items: [
          {
            quantity: 1,
            price_data: {
              currency: config.CREDITS_CURRENCY,
              unit_amount: credits / config.CREDITS_PER_MINOR_UNIT,
              product_data: { name: `${credits} credits` },
            },
          },
        ],
        success_url: config.CREDITS_CHECKOUT_RETURN_URL,
        cancel_url: config.CREDITS_CHECKOUT_RETURN_URL,
      });
    } catch (error) {
      // Stripe's own message may name the account's settings: log its type, answer a generic error.
      request.log.error({ err: { type: (error as Error).name, code: (error as { code?: string }).code } }, "stripe checkout failed");
      throw new CreditsError(502, "The payment provider refused to open a checkout: try again later");
    }
    return { url: session.url };
  });

  return app;
}

/**
 * Refuses (503) to take credits for a voucher the claim platform would refuse now: paused, or expecting
 * another issuer key (one rotated after a leak, while this service still signs with the old one).
 */
async function refuseWhenUnclaimable(chain: CreditsChain, issuer: string): Promise<void> {
  const status = await chain.status();
  if (status.paused) throw new CreditsError(503, "The claim platform is paused: redemptions are closed for now");
  if (status.issuer.toLowerCase() !== issuer.toLowerCase())
    throw new CreditsError(503, "The claim platform expects another issuer key: redemptions are closed until the service signs with it");
}

/**
 * One settlement of an account at a time: reads of the same account while its vouchers are being checked
 * wait for that check rather than start another (the route is public; a loop of reads costs the L2 RPC
 * one check at a time, and each check is one batch of calls).
 */
class SettlementQueue {
  readonly #running = new Map<string, Promise<void>>();

  run(account: string, settle: () => Promise<void>): Promise<void> {
    let running = this.#running.get(account);
    if (running === undefined) {
      running = settle().finally(() => this.#running.delete(account));
      this.#running.set(account, running);
    }
    return running;
  }
}

function envelope(reply: FastifyReply, status: number, message: string) {
  return reply.status(status).send({ status, message });
}

/** A claim account is a wallet address, kept in lower case. */
function claimAccount(text: string): string {
  if (!isAddress(text)) throw new CreditsError(400, "A claim account is a wallet address (0x…)");
  return getAddress(text).toLowerCase();
}

function itemOf(catalogue: Catalogue, itemId: bigint): CatalogueItem {
  const item = catalogue.items.find((entry) => BigInt(entry.id) === itemId);
  if (item === undefined) throw new CreditsError(404, `No item ${itemId} in the catalogue`);
  return item;
}

/** A voucher as the service answers it: what `VoucherClaims.claim` takes, with its state and price. */
function voucherView(voucher: VoucherRow, claimsContract: string) {
  return {
    voucher: voucherToJson({
      recipient: voucher.recipient as Address,
      itemId: BigInt(voucher.itemId),
      amount: BigInt(voucher.amount),
      voucherId: voucher.voucherId as `0x${string}`,
      expiry: BigInt(voucher.expiry),
    }),
    signature: voucher.signature,
    claimsContract,
    status: voucher.status,
    price: voucher.price,
    quantity: voucher.quantity,
    requestId: voucher.requestId,
  };
}

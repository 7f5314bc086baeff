import { z } from "zod/mini";

import { balanceAttestationJsonSchema } from "./attestation-kinds.ts";
import { jsonInteger } from "./balance-wire.ts";

/**
 * The webhooks' wire contract (docs/webhooks.md): what `POST /api/subscriptions` takes, the subscription
 * the API answers, a delivery attempt, and the body every delivery POSTs. The API generates its route schemas
 * and `/openapi.json` from these; the SDK's types are inferred from them.
 */

/** Subscriptions created by one request at most (a JSON array of items). */
export const MAX_SUBSCRIPTIONS_PER_REQUEST = 500;

export const WEBHOOK_CHAINS = ["ethereum", "solana"] as const;
export type WebhookChain = (typeof WEBHOOK_CHAINS)[number];

const addressField = z.string().check(z.maxLength(100));

/** One subscription to create: a pair (owner, asset), the URL its changes are POSTed to. */
export const subscriptionRequestSchema = z.strictObject({
  chain: z.enum(WEBHOOK_CHAINS),
  owner: addressField.check(z.describe("The wallet: an EVM address on ethereum, a base58 address on solana")),
  asset: addressField.check(z.describe("The token: an ERC-20 / ERC-721 / ERC-1155 contract on ethereum, an SPL mint on solana")),
  token_id: z.optional(addressField.check(z.describe("ERC-1155 only: the token id, a decimal string"))),
  url: z.string().check(z.maxLength(2_048), z.describe("Where deliveries are POSTed: https:// or http://, no credentials")),
  attest: z.optional(z.boolean().check(z.describe("Add the quorum-signed attestation of the new balance to each delivery"))),
});
export type SubscriptionRequest = z.infer<typeof subscriptionRequestSchema>;

/** `POST /api/subscriptions`'s body: one subscription, or an array of up to 500 (all created, or none). */
export const subscriptionsBodySchema = z.union([
  subscriptionRequestSchema,
  z.array(subscriptionRequestSchema).check(z.minLength(1), z.maxLength(MAX_SUBSCRIPTIONS_PER_REQUEST)),
]);

/** What a 201 gives once per subscription: its id and the secret that signs its deliveries (never shown again). */
export const createdSubscriptionSchema = z.object({ id: z.string(), secret: z.string() });
export type CreatedSubscription = z.infer<typeof createdSubscriptionSchema>;

export const SUBSCRIPTION_STATES = ["active", "failing"] as const;

/** A subscription as the API lists it (without its secret). */
export const subscriptionSchema = z.object({
  id: z.string(),
  chain: z.enum(WEBHOOK_CHAINS),
  owner: z.string(),
  asset: z.string(),
  token_id: z.optional(z.string()),
  url: z.string(),
  attest: z.boolean(),
  state: z
    .enum(SUBSCRIPTION_STATES)
    .check(z.describe("failing: a delivery was refused for the whole retry window; changes are still recorded, and a replay resumes it")),
  createdAt: z.string(),
  /** The balance when it was created, and the block or slot it was read at: changes after it are delivered. */
  balance: jsonInteger,
  block: jsonInteger,
});
export type SubscriptionJson = z.infer<typeof subscriptionSchema>;

/** `GET /api/subscriptions`: a page, oldest first; `next` is the `after` of the next page, absent on the last. */
export const subscriptionListSchema = z.object({ subscriptions: z.array(subscriptionSchema), next: z.optional(z.string()) });

/** One attempt to deliver one change. */
export const deliveryAttemptSchema = z.object({
  deliveryId: z.string(),
  attemptedAt: z.string(),
  ok: z.boolean(),
  status: z.optional(z.int().check(z.describe("The receiver's HTTP status, absent when none came back"))),
  latencyMs: z.int(),
  error: z.optional(z.string()),
});
export type DeliveryAttempt = z.infer<typeof deliveryAttemptSchema>;

export const deliveryListSchema = z.object({ deliveries: z.array(deliveryAttemptSchema) });

/**
 * The body of a delivery: `id` is the delivery's, the same on every retry and replay (the receiver's idempotency
 * key); balances and the block are exact JSON integers. `correction` is true when a reorg undid the change
 * delivered before: `balance` is then the balance on the chain that won.
 */
export const webhookDeliverySchema = z.object({
  id: z.string(),
  subscriptionId: z.string(),
  chain: z.enum(WEBHOOK_CHAINS),
  owner: z.string(),
  asset: z.string(),
  token_id: z.optional(z.string()),
  balance: jsonInteger,
  previousBalance: jsonInteger,
  block: jsonInteger,
  blockHash: z.optional(z.string()),
  correction: z.optional(z.boolean()),
  observedAt: z.string(),
  attestation: z.optional(
    balanceAttestationJsonSchema.check(z.describe("With attest: true, the quorum's BalanceAttestation of the holding at `block`")),
  ),
});
export type WebhookDelivery = z.infer<typeof webhookDeliverySchema>;

import type { FastifyInstance, FastifyRequest } from "fastify";
import { z } from "zod";

import {
  createdSubscriptionSchema,
  deliveryListSchema,
  MAX_SUBSCRIPTIONS_PER_REQUEST,
  subscriptionListSchema,
  subscriptionSchema,
  subscriptionsBodySchema,
  type SubscriptionJson,
  type SubscriptionRequest,
} from "@avn/protocol/webhook-wire";
import { AssetNotFoundError, TokenIdRequiredError } from "../../chains/rpc/errors.ts";
import { parseDecimalUint256, parseEvmAddress, parseSolanaAddress } from "../addresses.ts";
import { ApiError } from "../api-error.ts";
import { TOKEN_ID_NOT_ATTESTABLE } from "../server/chains.ts";
import { ERROR_RESPONSES } from "../server/responses.ts";
import { routeSchema } from "../route-schema.ts";
import type { DeliveryQueue } from "./delivery-queue.ts";
import { SubscriptionLimitError, type NewSubscription, type Subscription, type SubscriptionStore } from "./subscription-store.ts";
import { checkWebhookDestination, parseWebhookUrl, WebhookUrlError } from "./url-guard.ts";

/** What the subscription routes are built from. */
export interface SubscriptionRoutesDependencies {
  subscriptions: SubscriptionStore;
  queue: DeliveryQueue;
  /** The balance and the block it was read at, now: the baseline a subscription's changes are measured from. */
  readEvm(asset: string, owner: string, tokenId: bigint | undefined): Promise<{ balance: bigint; block: bigint }>;
  /** The same on Solana: the owner's balance of the mint and the slot it was read at. */
  readSolana(mint: string, owner: string): Promise<{ balance: bigint; block: bigint }>;
  /** Pairs a key may watch (`WEBHOOK_MAX_PER_KEY`). */
  maxPerKey: number;
  /** URLs resolving to private addresses are accepted (`WEBHOOK_ALLOW_PRIVATE`, the local stack). */
  allowPrivate: boolean;
  /** The attestation hub is on: `attest: true` is served. */
  attestable: boolean;
  /** Told after subscriptions are created or deleted, so the follower watches them from its next block. */
  onChange(): void;
}

/** 500 subscriptions, each with a URL of the longest (2,048 characters) and its other fields. */
const SUBSCRIPTIONS_BODY_LIMIT_BYTES = 1_280 * 1024;
/** Baseline reads of one request in flight at once (a Solana one is two upstream calls). */
const BASELINE_READS_IN_FLIGHT = 50;
const SUBSCRIPTION_ID = /^sub_[0-9a-f]{24}$/;
const NOT_FOUND = "No subscription with this id";
const DEFAULT_PAGE = 100;
const MAX_PAGE = 1_000;

const idParams = { type: "object", properties: { id: { type: "string", maxLength: 64 } }, required: ["id"] } as const;
const security = [{ apiKey: [] }];

/**
 * The webhooks' routes (docs/webhooks.md): `POST /api/subscriptions` (one, or up to 500 at once, all or none),
 * list, get, delete, the latest delivery attempts, and replay. Each is behind the API key like every route,
 * and a key sees only its own subscriptions.
 */
export function registerSubscriptionRoutes(app: FastifyInstance, deps: SubscriptionRoutesDependencies): void {
  app.post<{ Body: SubscriptionRequest | SubscriptionRequest[] }>(
    "/api/subscriptions",
    {
      bodyLimit: SUBSCRIPTIONS_BODY_LIMIT_BYTES,
      config: { requiresApiKey: true },
      schema: {
        summary: `Watch holdings: one subscription, or an array of up to ${MAX_SUBSCRIPTIONS_PER_REQUEST}; each change is POSTed to its url`,
        security,
        body: routeSchema(subscriptionsBodySchema, "input"),
        response: {
          201: {
            description: "The subscription's id and secret (shown once), or for an array, `subscriptions` in its order",
            ...routeSchema(z.union([createdSubscriptionSchema, z.object({ subscriptions: z.array(createdSubscriptionSchema) })])),
          },
          ...ERROR_RESPONSES,
        },
      },
    },
    async (request, reply) => {
      const keyId = keyIdOf(request);
      const many = Array.isArray(request.body);
      const items = many ? (request.body as SubscriptionRequest[]) : [request.body as SubscriptionRequest];
      // Every item's fields first (no upstream call), then the key's room, then each distinct host once, then
      // the balances, a bounded number at a time: a refused request costs the upstreams nothing.
      const parsed = items.map((item, index) => parseItem(item, many ? `[${index}].` : "", deps));
      const watched = await deps.subscriptions.count(keyId);
      if (watched + items.length > deps.maxPerKey) throw limitReached(watched, deps.maxPerKey, items.length);
      await checkDestinations(parsed, deps.allowPrivate);
      const checked: NewSubscription[] = [];
      for (let start = 0; start < parsed.length; start += BASELINE_READS_IN_FLIGHT)
        checked.push(...(await Promise.all(parsed.slice(start, start + BASELINE_READS_IN_FLIGHT).map((item) => withBaseline(item, deps)))));
      let created: Subscription[];
      try {
        created = await deps.subscriptions.create(keyId, checked, deps.maxPerKey);
      } catch (error) {
        // Another request of the key took the room meanwhile (the store counts again under a lock).
        if (error instanceof SubscriptionLimitError) throw limitReached(error.watched, error.limit, items.length);
        throw error;
      }
      deps.onChange();
      const secrets = created.map(({ id, secret }) => ({ id, secret }));
      return reply.code(201).send(many ? { subscriptions: secrets } : secrets[0]);
    },
  );

  app.get<{ Querystring: { after?: string; limit?: string } }>(
    "/api/subscriptions",
    {
      config: { requiresApiKey: true },
      schema: {
        summary: "The key's subscriptions, a page at a time in id order",
        security,
        querystring: {
          type: "object",
          properties: {
            after: { type: "string", maxLength: 64, description: "The `next` of the page before" },
            limit: {
              type: "string",
              pattern: "^[0-9]{1,4}$",
              description: `Subscriptions per page, 1 to ${MAX_PAGE} (default ${DEFAULT_PAGE})`,
            },
          },
          additionalProperties: false,
        },
        response: { 200: routeSchema(subscriptionListSchema), ...ERROR_RESPONSES },
      },
    },
    async (request) => {
      const limit = request.query.limit === undefined ? DEFAULT_PAGE : Number(request.query.limit);
      if (limit < 1 || limit > MAX_PAGE) throw new ApiError(400, `limit must be between 1 and ${MAX_PAGE}`);
      const page = await deps.subscriptions.list(keyIdOf(request), { after: request.query.after, limit: limit + 1 });
      const shown = page.slice(0, limit);
      return {
        subscriptions: shown.map(subscriptionJson),
        ...(page.length > limit ? { next: shown[shown.length - 1].id } : {}),
      };
    },
  );

  app.get<{ Params: { id: string } }>(
    "/api/subscriptions/:id",
    {
      config: { requiresApiKey: true },
      schema: {
        summary: "One subscription",
        security,
        params: idParams,
        response: { 200: routeSchema(subscriptionSchema), ...ERROR_RESPONSES },
      },
    },
    async (request) => subscriptionJson(await ownSubscription(request, deps)),
  );

  app.delete<{ Params: { id: string } }>(
    "/api/subscriptions/:id",
    {
      config: { requiresApiKey: true },
      schema: {
        summary: "Stop watching: no change after this is delivered",
        security,
        params: idParams,
        response: { 204: { description: "Deleted", type: "null" }, ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const id = request.params.id;
      if (!SUBSCRIPTION_ID.test(id) || !(await deps.subscriptions.delete(keyIdOf(request), id))) throw new ApiError(404, NOT_FOUND);
      deps.onChange();
      return reply.code(204).send();
    },
  );

  app.get<{ Params: { id: string } }>(
    "/api/subscriptions/:id/deliveries",
    {
      config: { requiresApiKey: true },
      schema: {
        summary: "The subscription's latest delivery attempts, newest first: status, latency, error",
        security,
        params: idParams,
        response: { 200: routeSchema(deliveryListSchema), ...ERROR_RESPONSES },
      },
    },
    async (request) => {
      const subscription = await ownSubscription(request, deps);
      return { deliveries: await deps.queue.attempts(subscription.id) };
    },
  );

  app.post<{ Params: { id: string }; Querystring: { since: string } }>(
    "/api/subscriptions/:id/replay",
    {
      config: { requiresApiKey: true },
      schema: {
        summary: "Send the changes observed since a time again, with their ids; a failing subscription becomes active",
        security,
        params: idParams,
        querystring: {
          type: "object",
          properties: { since: { type: "string", maxLength: 40, description: "An ISO-8601 time, or unix seconds" } },
          required: ["since"],
          additionalProperties: false,
        },
        response: {
          202: { type: "object", properties: { replayed: { type: "integer" } }, required: ["replayed"] },
          ...ERROR_RESPONSES,
        },
      },
    },
    async (request, reply) => {
      const subscription = await ownSubscription(request, deps);
      const replayed = await deps.queue.replay(subscription.id, parseSince(request.query.since));
      deps.onChange();
      return reply.code(202).send({ replayed });
    },
  );
}

/** The verified key of a route marked `requiresApiKey` (the key check ran before the handler). */
function keyIdOf(request: FastifyRequest): string {
  const key = request.apiKey;
  if (key === undefined) throw new ApiError(401, "Missing API key");
  return key.id;
}

async function ownSubscription(
  request: FastifyRequest<{ Params: { id: string } }>,
  deps: SubscriptionRoutesDependencies,
): Promise<Subscription> {
  const id = request.params.id;
  const subscription = SUBSCRIPTION_ID.test(id) ? await deps.subscriptions.get(keyIdOf(request), id) : undefined;
  if (subscription === undefined) throw new ApiError(404, NOT_FOUND);
  return subscription;
}

/** An item whose fields are checked, with the prefix its refusals name it by. */
interface ParsedItem {
  prefix: string;
  chain: SubscriptionRequest["chain"];
  owner: string;
  asset: string;
  tokenId: bigint | undefined;
  url: URL;
  attest: boolean;
}

/** One item's fields checked, each refusal a 400 naming its field (`[3].owner` in an array); no upstream call. */
function parseItem(item: SubscriptionRequest, prefix: string, deps: SubscriptionRoutesDependencies): ParsedItem {
  const solana = item.chain === "solana";
  const owner = solana ? parseSolanaAddress(`${prefix}owner`, item.owner) : parseEvmAddress(`${prefix}owner`, item.owner);
  const asset = solana ? parseSolanaAddress(`${prefix}asset`, item.asset) : parseEvmAddress(`${prefix}asset`, item.asset);
  if (solana && item.token_id !== undefined)
    throw new ApiError(400, `${prefix}token_id is only for ethereum: a Solana mint has no token ids (an NFT is a mint of its own)`);
  const tokenId = item.token_id === undefined ? undefined : parseDecimalUint256(`${prefix}token_id`, item.token_id);
  const attest = item.attest === true;
  // Before the 501: the request is wrong whatever the server offers.
  if (attest && tokenId !== undefined) throw new ApiError(400, `${prefix}${TOKEN_ID_NOT_ATTESTABLE}`);
  if (attest && !deps.attestable) throw new ApiError(501, `${prefix}attest: attested answers are not enabled on this server`);
  let url: URL;
  try {
    url = parseWebhookUrl(item.url);
  } catch (error) {
    if (error instanceof WebhookUrlError) throw new ApiError(400, `${prefix}${error.message}`);
    throw error;
  }
  return { prefix, chain: item.chain, owner, asset, tokenId, url, attest };
}

/** The SSRF guard on each distinct host of the request once (500 items to one receiver are one lookup). */
async function checkDestinations(items: readonly ParsedItem[], allowPrivate: boolean): Promise<void> {
  const checks = new Map<string, Promise<void>>();
  for (const item of items) {
    const host = item.url.host;
    if (!checks.has(host)) checks.set(host, checkWebhookDestination(item.url, { allowPrivate }));
  }
  for (const item of items) {
    try {
      await checks.get(item.url.host);
    } catch (error) {
      if (error instanceof WebhookUrlError) throw new ApiError(400, `${item.prefix}${error.message}`);
      throw error;
    }
  }
}

/** The item with the balance read now: what its changes are measured from. */
async function withBaseline(item: ParsedItem, deps: SubscriptionRoutesDependencies): Promise<NewSubscription> {
  const { prefix, owner, asset, tokenId } = item;
  let baseline: { balance: bigint; block: bigint };
  try {
    baseline = item.chain === "solana" ? await deps.readSolana(asset, owner) : await deps.readEvm(asset, owner, tokenId);
  } catch (error) {
    if (error instanceof AssetNotFoundError) throw new ApiError(404, `${prefix}asset: no token found at the given address`);
    if (error instanceof TokenIdRequiredError)
      throw new ApiError(400, `${prefix}token_id is required: the contract is an ERC-1155 token, whose balances are per token id`);
    throw error;
  }
  return {
    chain: item.chain,
    owner,
    asset,
    tokenId: tokenId?.toString() ?? "",
    url: item.url.toString(),
    attest: item.attest,
    baselineBalance: baseline.balance,
    baselineBlock: baseline.block,
  };
}

function limitReached(watched: number, limit: number, adding: number): ApiError {
  return new ApiError(400, `subscriptions: this key watches ${watched} of at most ${limit} pairs; ${adding} more would exceed it`);
}

/** `since`: ISO-8601, or unix seconds. */
function parseSince(since: string): Date {
  const date = /^[0-9]{1,12}$/.test(since) ? new Date(Number(since) * 1000) : new Date(since);
  if (Number.isNaN(date.getTime())) throw new ApiError(400, "since must be an ISO-8601 time or unix seconds");
  return date;
}

function subscriptionJson(subscription: Subscription): SubscriptionJson {
  return {
    id: subscription.id,
    chain: subscription.chain,
    owner: subscription.owner,
    asset: subscription.asset,
    ...(subscription.tokenId === "" ? {} : { token_id: subscription.tokenId }),
    url: subscription.url,
    attest: subscription.attest,
    state: subscription.state === "failing" ? "failing" : "active",
    createdAt: subscription.createdAt,
    balance: subscription.baselineBalance,
    block: subscription.baselineBlock,
  };
}

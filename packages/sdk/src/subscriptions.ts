import type { CreatedSubscription, DeliveryAttempt, SubscriptionJson, WebhookChain } from "@avn/protocol/webhook-wire";

import { AvnApiError, InvalidArgumentError } from "./errors.ts";
import { requestJson, type HttpOptions } from "./http.ts";

/** One pair to watch, and where its changes are POSTed (docs/webhooks.md). */
export interface SubscriptionRequest {
  chain: WebhookChain;
  /** The wallet: an EVM address on ethereum, a base58 address on solana. */
  owner: string;
  /** An ERC-20 / ERC-721 / ERC-1155 contract on ethereum, an SPL mint on solana. */
  asset: string;
  /** ERC-1155 only. */
  tokenId?: bigint | string;
  /** https:// (or http://), reachable from the API; no credentials in it. */
  url: string;
  /** Add the quorum's signed attestation of each new balance to its delivery (not with `tokenId`; needs the API's hub). */
  attest?: boolean;
}

/** A subscription as the API lists it: its secret is shown only by `create`. */
export interface Subscription {
  id: string;
  chain: WebhookChain;
  owner: string;
  asset: string;
  tokenId?: string;
  url: string;
  attest: boolean;
  /** failing: a change was refused for the whole retry window; `replay` resumes it. */
  state: "active" | "failing";
  createdAt: string;
  /** The balance when it was created, and the block or slot it was read at: changes after it are delivered. */
  balance: bigint;
  block: bigint;
}

/** `client.subscriptions`: create, list, get, delete, the latest delivery attempts, and replay. */
export class Subscriptions {
  readonly #http: HttpOptions;

  constructor(http: HttpOptions) {
    this.#http = http;
  }

  /**
   * Watches one pair (its id and secret) or up to 500 at once (all, in order, or none). The secret signs every
   * delivery (`verifyWebhook`) and is never shown again: keep it. Not retried after an answer that may come
   * after the creation (a 5xx, no answer): list the subscriptions before creating them again.
   */
  create(request: SubscriptionRequest, options?: { signal?: AbortSignal }): Promise<CreatedSubscription>;
  create(requests: readonly SubscriptionRequest[], options?: { signal?: AbortSignal }): Promise<CreatedSubscription[]>;
  async create(
    requests: SubscriptionRequest | readonly SubscriptionRequest[],
    options: { signal?: AbortSignal } = {},
  ): Promise<CreatedSubscription | CreatedSubscription[]> {
    const many = Array.isArray(requests);
    const items = (many ? requests : [requests]) as readonly SubscriptionRequest[];
    if (many && items.length === 0) throw new InvalidArgumentError("requests", "requests must name at least one subscription");
    const body = items.map(({ chain, owner, asset, tokenId, url, attest }) => ({
      chain,
      owner,
      asset,
      url,
      ...(tokenId === undefined ? {} : { token_id: tokenId.toString() }),
      ...(attest === undefined ? {} : { attest }),
    }));
    const answer = await requestJson(this.#http, {
      method: "POST",
      path: "/api/subscriptions",
      body: many ? body : body[0],
      signal: options.signal,
      idempotent: false,
    });
    if (!many) return createdOf(answer, "");
    const list = (answer as { subscriptions?: unknown }).subscriptions;
    if (!Array.isArray(list)) throw malformed("subscriptions is not an array");
    return list.map((entry, index) => createdOf(entry, `subscriptions[${index}].`));
  }

  /** A page of the key's subscriptions in id order; `next` is the `after` of the next page, absent on the last. */
  async list(
    options: { after?: string; limit?: number; signal?: AbortSignal } = {},
  ): Promise<{ subscriptions: Subscription[]; next?: string }> {
    const query: Record<string, string> = {};
    if (options.after !== undefined) query.after = options.after;
    if (options.limit !== undefined) query.limit = String(options.limit);
    const answer = (await requestJson(this.#http, { method: "GET", path: "/api/subscriptions", query, signal: options.signal })) as {
      subscriptions?: unknown;
      next?: unknown;
    };
    if (!Array.isArray(answer.subscriptions)) throw malformed("subscriptions is not an array");
    const page: { subscriptions: Subscription[]; next?: string } = { subscriptions: answer.subscriptions.map(subscriptionOf) };
    if (typeof answer.next === "string") page.next = answer.next;
    return page;
  }

  async get(id: string, options: { signal?: AbortSignal } = {}): Promise<Subscription> {
    return subscriptionOf(
      await requestJson(this.#http, { method: "GET", path: `/api/subscriptions/${encodeId(id)}`, signal: options.signal }),
    );
  }

  /** Stops watching: no change after it is delivered. A 404 (`AvnApiError`) for an id the key does not have. */
  async delete(id: string, options: { signal?: AbortSignal } = {}): Promise<void> {
    await requestJson(this.#http, {
      method: "DELETE",
      path: `/api/subscriptions/${encodeId(id)}`,
      signal: options.signal,
      idempotent: false,
    });
  }

  /** The latest attempts to deliver the subscription's changes, newest first. */
  async deliveries(id: string, options: { signal?: AbortSignal } = {}): Promise<DeliveryAttempt[]> {
    const answer = (await requestJson(this.#http, {
      method: "GET",
      path: `/api/subscriptions/${encodeId(id)}/deliveries`,
      signal: options.signal,
    })) as { deliveries?: unknown };
    if (!Array.isArray(answer.deliveries)) throw malformed("deliveries is not an array");
    return answer.deliveries as DeliveryAttempt[];
  }

  /** Sends the changes observed since `since` again, with their ids, and resumes a failing subscription. */
  async replay(id: string, since: Date, options: { signal?: AbortSignal } = {}): Promise<{ replayed: number }> {
    if (Number.isNaN(since.getTime())) throw new InvalidArgumentError("since", "since must be a valid Date");
    const answer = (await requestJson(this.#http, {
      method: "POST",
      path: `/api/subscriptions/${encodeId(id)}/replay`,
      query: { since: since.toISOString() },
      signal: options.signal,
    })) as { replayed?: unknown };
    if (typeof answer.replayed !== "number") throw malformed("replayed is not a number");
    return { replayed: answer.replayed };
  }
}

function encodeId(id: string): string {
  if (typeof id !== "string" || id === "") throw new InvalidArgumentError("id", "id must be a subscription id (sub_…)");
  return encodeURIComponent(id);
}

function createdOf(value: unknown, path: string): CreatedSubscription {
  const entry = value as { id?: unknown; secret?: unknown } | null;
  if (typeof entry?.id !== "string" || typeof entry.secret !== "string") throw malformed(`${path}id or ${path}secret is missing`);
  return { id: entry.id, secret: entry.secret };
}

function subscriptionOf(value: unknown): Subscription {
  const json = value as SubscriptionJson | null;
  if (typeof json?.id !== "string") throw malformed("a subscription has no id");
  const subscription: Subscription = {
    id: json.id,
    chain: json.chain,
    owner: json.owner,
    asset: json.asset,
    url: json.url,
    attest: json.attest,
    state: json.state,
    createdAt: json.createdAt,
    balance: BigInt(json.balance),
    block: BigInt(json.block),
  };
  if (json.token_id !== undefined) subscription.tokenId = json.token_id;
  return subscription;
}

function malformed(problem: string): AvnApiError {
  return new AvnApiError(200, `Unexpected answer from the API: ${problem}`);
}

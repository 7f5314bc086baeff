import { AvnError } from "@avn/protocol/errors";
import { randomBytes } from "node:crypto";

import type { Kysely, Transaction } from "kysely";

import type { WebhookChain } from "@avn/protocol/webhook-wire";
import type { KeyDatabaseSchema } from "../keys/database/schema.ts";

type Db = Kysely<KeyDatabaseSchema>;

/** A subscription as the store keeps it; `tokenId` is '' for none, balances and blocks are bigints. */
export interface Subscription {
  id: string;
  keyId: string;
  chain: WebhookChain;
  owner: string;
  asset: string;
  tokenId: string;
  url: string;
  secret: string;
  attest: boolean;
  state: "active" | "failing" | "deleted";
  createdAt: string;
  baselineBalance: bigint;
  baselineBlock: bigint;
  changeSeq: bigint;
}

/** A checked subscription to create, with the balance read when it was asked for. */
export type NewSubscription = Pick<
  Subscription,
  "chain" | "owner" | "asset" | "tokenId" | "url" | "attest" | "baselineBalance" | "baselineBlock"
>;

/** The key watches as many pairs as it may: the whole request is refused. */
export class SubscriptionLimitError extends AvnError<"WEBHOOK_SUBSCRIPTION_LIMIT"> {
  readonly watched: number;
  readonly limit: number;

  constructor(watched: number, limit: number) {
    super("WEBHOOK_SUBSCRIPTION_LIMIT", `this key watches ${watched} subscriptions and may watch ${limit} in all`);
    this.name = "SubscriptionLimitError";
    this.watched = watched;
    this.limit = limit;
  }
}

type Row = KeyDatabaseSchema["webhook_subscriptions"];

function fromRow(row: Row): Subscription {
  return {
    id: row.id,
    keyId: row.key_id,
    chain: row.chain as WebhookChain,
    owner: row.owner,
    asset: row.asset,
    tokenId: row.token_id,
    url: row.url,
    secret: row.secret,
    attest: row.attest === 1,
    state: row.state as Subscription["state"],
    createdAt: row.created_at,
    baselineBalance: BigInt(row.baseline_balance),
    baselineBlock: BigInt(row.baseline_block),
    changeSeq: BigInt(row.change_seq),
  };
}

/**
 * Every change to the subscriptions takes the next `subscriptions` revision first, in its transaction: the
 * update locks that row until the commit, so revisions are committed in their order, and a follower that
 * loads the rows changed after the revision it has seen never misses one committed late.
 */
async function nextRevision(transaction: Transaction<KeyDatabaseSchema>): Promise<bigint> {
  const row = await transaction
    .updateTable("webhook_state")
    .set((eb) => ({ revision: eb("revision", "+", 1) }))
    .where("name", "=", "subscriptions")
    .returning("revision")
    .executeTakeFirstOrThrow();
  return BigInt(row.revision);
}

/** `sub_` and 96 random bits: ids are not guessable, though a key sees only its own anyway. */
const newSubscriptionId = () => `sub_${randomBytes(12).toString("hex")}`;
/** `whsec_` and 256 random bits, as Stripe's endpoint secrets. */
const newSecret = () => `whsec_${randomBytes(32).toString("base64url")}`;

/** The subscriptions in the key database: created, listed, deleted per key; loaded by the followers. */
export class SubscriptionStore {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  /** Creates all of `items` for `keyId`, or none when the key would watch more than `limit`. */
  async create(keyId: string, items: readonly NewSubscription[], limit: number, now = new Date()): Promise<Subscription[]> {
    return this.#db.transaction().execute(async (transaction) => {
      const revision = await nextRevision(transaction); // also serialises the count below
      const { watched } = await transaction
        .selectFrom("webhook_subscriptions")
        .select((eb) => eb.fn.countAll<number | string>().as("watched"))
        .where("key_id", "=", keyId)
        .where("state", "!=", "deleted")
        .executeTakeFirstOrThrow();
      if (Number(watched) + items.length > limit) throw new SubscriptionLimitError(Number(watched), limit);
      const createdAt = now.toISOString();
      const created = items.map((item): Subscription => ({
        ...item,
        id: newSubscriptionId(),
        keyId,
        secret: newSecret(),
        state: "active",
        createdAt,
        changeSeq: revision,
      }));
      for (let start = 0; start < created.length; start += 100) {
        await transaction
          .insertInto("webhook_subscriptions")
          .values(
            created.slice(start, start + 100).map((subscription) => ({
              id: subscription.id,
              key_id: keyId,
              chain: subscription.chain,
              owner: subscription.owner,
              asset: subscription.asset,
              token_id: subscription.tokenId,
              url: subscription.url,
              secret: subscription.secret,
              attest: subscription.attest ? 1 : 0,
              state: subscription.state,
              created_at: createdAt,
              deleted_at: null,
              baseline_balance: subscription.baselineBalance.toString(),
              baseline_block: subscription.baselineBlock.toString(),
              change_seq: revision.toString(),
            })),
          )
          .execute();
      }
      return created;
    });
  }

  /** The key's subscription `id`, unless deleted or another key's. */
  async get(keyId: string, id: string): Promise<Subscription | undefined> {
    const row = await this.#db
      .selectFrom("webhook_subscriptions")
      .selectAll()
      .where("id", "=", id)
      .where("key_id", "=", keyId)
      .where("state", "!=", "deleted")
      .executeTakeFirst();
    return row === undefined ? undefined : fromRow(row);
  }

  /** How many subscriptions the key has (deleted ones aside). */
  async count(keyId: string): Promise<number> {
    const { watched } = await this.#db
      .selectFrom("webhook_subscriptions")
      .select((eb) => eb.fn.countAll<number | string>().as("watched"))
      .where("key_id", "=", keyId)
      .where("state", "!=", "deleted")
      .executeTakeFirstOrThrow();
    return Number(watched);
  }

  /** A page of the key's subscriptions in id order, after `after`. */
  async list(keyId: string, options: { after?: string; limit: number }): Promise<Subscription[]> {
    let query = this.#db.selectFrom("webhook_subscriptions").selectAll().where("key_id", "=", keyId).where("state", "!=", "deleted");
    if (options.after !== undefined) query = query.where("id", ">", options.after);
    const rows = await query.orderBy("id").limit(options.limit).execute();
    return rows.map(fromRow);
  }

  /** Deletes the key's subscription `id`: false when there was none. Its changes are no longer delivered. */
  async delete(keyId: string, id: string, now = new Date()): Promise<boolean> {
    return this.#db.transaction().execute(async (transaction) => {
      const revision = await nextRevision(transaction);
      const result = await transaction
        .updateTable("webhook_subscriptions")
        .set({ state: "deleted", deleted_at: now.toISOString(), change_seq: revision.toString() })
        .where("id", "=", id)
        .where("key_id", "=", keyId)
        .where("state", "!=", "deleted")
        .executeTakeFirst();
      if (result.numUpdatedRows === 0n) return false;
      // Its changes not sent yet never will be: out of the queue, kept on record.
      await transaction
        .updateTable("webhook_events")
        .set({ state: "cancelled" })
        .where("subscription_id", "=", id)
        .where("state", "=", "pending")
        .execute();
      return true;
    });
  }

  /** The subscriptions (deleted ones too) changed after `revision`, and the revision they bring the reader to. */
  async changedSince(revision: bigint): Promise<{ subscriptions: Subscription[]; revision: bigint }> {
    return this.#db.transaction().execute(async (transaction) => {
      const current = await transaction
        .selectFrom("webhook_state")
        .select("revision")
        .where("name", "=", "subscriptions")
        .executeTakeFirstOrThrow();
      const rows = await transaction
        .selectFrom("webhook_subscriptions")
        .selectAll()
        .where("change_seq", ">", revision.toString())
        .where("change_seq", "<=", String(current.revision))
        .execute();
      return { subscriptions: rows.map(fromRow), revision: BigInt(current.revision) };
    });
  }
}

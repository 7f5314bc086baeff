import { sql, type Kysely } from "kysely";
import type { Migration } from "kysely/migration";

import type { SqlDialect } from "../../../common/database.ts";

/**
 * The key database's schema, applied in order by Kysely's `Migrator` (which records what ran in its
 * own `kysely_migration` table and, on PostgreSQL, holds an advisory lock while it migrates, so several
 * API processes starting at once migrate once). Never edit a migration that has shipped: add one.
 *
 * Column types differ only where the dialects do: SQLite's STRICT tables know `integer`, PostgreSQL
 * counts above 2^31 need `bigint`.
 */
export function keyMigrations(dialect: SqlDialect): Record<string, Migration> {
  const counter = dialect === "sqlite" ? "integer" : "bigint";
  // STRICT makes SQLite refuse a value of the wrong type instead of storing it anyway.
  const strict = dialect === "sqlite" ? sql`strict` : sql``;
  return {
    // The first wave's table, created by hand-written SQL before migrations: `ifNotExists` adopts an
    // existing database unchanged.
    "0001_api_keys": {
      async up(db: Kysely<unknown>) {
        await db.schema
          .createTable("api_keys")
          .ifNotExists()
          .addColumn("id", "text", (column) => column.primaryKey())
          .addColumn("name", "text", (column) => column.notNull())
          .addColumn("key_hash", "text", (column) => column.notNull().unique())
          .addColumn("created_at", "text", (column) => column.notNull())
          .addColumn("revoked_at", "text")
          .modifyEnd(strict)
          .execute();
        await db.schema.createIndex("api_keys_revoked_at").ifNotExists().on("api_keys").column("revoked_at").execute();
      },
    },
    "0002_quota_revision_usage": {
      async up(db: Kysely<unknown>) {
        await db.schema.alterTable("api_keys").addColumn("monthly_quota", counter).execute();
        await db.schema
          .createTable("api_key_revision")
          .addColumn("id", "integer", (column) => column.primaryKey())
          .addColumn("revision", counter, (column) => column.notNull())
          .modifyEnd(strict)
          .execute();
        // Revocations made before this migration are already in effect everywhere: start at 0.
        await sql`insert into api_key_revision (id, revision) values (1, 0)`.execute(db);
        await db.schema
          .createTable("api_usage")
          .addColumn("key_id", "text", (column) => column.notNull())
          .addColumn("day", "text", (column) => column.notNull())
          .addColumn("endpoint", "text", (column) => column.notNull())
          .addColumn("status_class", "text", (column) => column.notNull())
          .addColumn("requests", counter, (column) => column.notNull())
          .addPrimaryKeyConstraint("api_usage_pk", ["key_id", "day", "endpoint", "status_class"])
          .modifyEnd(strict)
          .execute();
        // The monthly totals of every key read by each flush scan by day.
        await db.schema.createIndex("api_usage_day").on("api_usage").columns(["day", "key_id"]).execute();
      },
    },
    // Webhooks (docs/webhooks.md): the subscriptions, the follower's progress per chain, the last balance seen
    // of each watched pair, the changes to deliver (the queue) and every delivery attempt. Balances and block
    // numbers are decimal text: they exceed 2^63.
    "0003_webhooks": {
      async up(db: Kysely<unknown>) {
        await db.schema
          .createTable("webhook_subscriptions")
          .addColumn("id", "text", (column) => column.primaryKey())
          .addColumn("key_id", "text", (column) => column.notNull())
          .addColumn("chain", "text", (column) => column.notNull())
          .addColumn("owner", "text", (column) => column.notNull())
          .addColumn("asset", "text", (column) => column.notNull())
          // '' for none: a primary-key-like identity of the pair, which null would not give.
          .addColumn("token_id", "text", (column) => column.notNull())
          .addColumn("url", "text", (column) => column.notNull())
          .addColumn("secret", "text", (column) => column.notNull())
          .addColumn("attest", "integer", (column) => column.notNull())
          .addColumn("state", "text", (column) => column.notNull())
          .addColumn("created_at", "text", (column) => column.notNull())
          .addColumn("deleted_at", "text")
          .addColumn("baseline_balance", "text", (column) => column.notNull())
          .addColumn("baseline_block", "text", (column) => column.notNull())
          .addColumn("change_seq", counter, (column) => column.notNull())
          .modifyEnd(strict)
          .execute();
        await db.schema.createIndex("webhook_subscriptions_key").on("webhook_subscriptions").columns(["key_id", "state", "id"]).execute();
        await db.schema.createIndex("webhook_subscriptions_change").on("webhook_subscriptions").column("change_seq").execute();
        // One row per name: `subscriptions` (the revision every subscription change takes, in commit order) and
        // `leader` (the process that follows the chains, and until when).
        await db.schema
          .createTable("webhook_state")
          .addColumn("name", "text", (column) => column.primaryKey())
          .addColumn("revision", counter, (column) => column.notNull())
          .addColumn("owner", "text")
          .addColumn("until_ms", counter)
          .modifyEnd(strict)
          .execute();
        await sql`insert into webhook_state (name, revision) values ('subscriptions', 0), ('leader', 0)`.execute(db);
        await db.schema
          .createTable("webhook_cursors")
          .addColumn("chain", "text", (column) => column.primaryKey())
          .addColumn("block", "text", (column) => column.notNull())
          // The subscriptions revision the follower had loaded when it recorded that block: subscriptions changed
          // after it were not watched yet, and their changes before it are caught up on.
          .addColumn("revision", counter, (column) => column.notNull())
          // The recent blocks' hashes, JSON [[number, hash], …]: where a reorg's common ancestor is found.
          .addColumn("recent", "text", (column) => column.notNull())
          .modifyEnd(strict)
          .execute();
        await db.schema
          .createTable("webhook_pairs")
          .addColumn("chain", "text", (column) => column.notNull())
          .addColumn("owner", "text", (column) => column.notNull())
          .addColumn("asset", "text", (column) => column.notNull())
          .addColumn("token_id", "text", (column) => column.notNull())
          .addColumn("balance", "text", (column) => column.notNull())
          .addColumn("block", "text", (column) => column.notNull())
          .addPrimaryKeyConstraint("webhook_pairs_pk", ["chain", "owner", "asset", "token_id"])
          .modifyEnd(strict)
          .execute();
        await db.schema
          .createTable("webhook_events")
          .addColumn("seq", dialect === "sqlite" ? "integer" : "bigserial", (column) =>
            dialect === "sqlite" ? column.primaryKey().autoIncrement() : column.primaryKey(),
          )
          .addColumn("id", "text", (column) => column.notNull().unique())
          .addColumn("subscription_id", "text", (column) => column.notNull())
          .addColumn("payload", "text", (column) => column.notNull())
          .addColumn("observed_at", "text", (column) => column.notNull())
          .addColumn("state", "text", (column) => column.notNull())
          .addColumn("attempts", "integer", (column) => column.notNull())
          .addColumn("next_attempt_ms", counter, (column) => column.notNull())
          .addColumn("first_attempt_ms", counter)
          .addColumn("lease_owner", "text")
          .addColumn("lease_until_ms", counter)
          .modifyEnd(strict)
          .execute();
        // The dispatcher takes the oldest pending change of each subscription.
        await db.schema.createIndex("webhook_events_queue").on("webhook_events").columns(["state", "subscription_id", "seq"]).execute();
        await db.schema.createIndex("webhook_events_replay").on("webhook_events").columns(["subscription_id", "observed_at"]).execute();
        // …in order of when they are due.
        await db.schema.createIndex("webhook_events_due").on("webhook_events").columns(["state", "next_attempt_ms"]).execute();
        await db.schema
          .createTable("webhook_attempts")
          .addColumn("event_id", "text", (column) => column.notNull())
          .addColumn("subscription_id", "text", (column) => column.notNull())
          .addColumn("attempted_at", "text", (column) => column.notNull())
          .addColumn("ok", "integer", (column) => column.notNull())
          .addColumn("status", "integer")
          .addColumn("latency_ms", "integer", (column) => column.notNull())
          .addColumn("error", "text")
          .modifyEnd(strict)
          .execute();
        await db.schema
          .createIndex("webhook_attempts_subscription")
          .on("webhook_attempts")
          .columns(["subscription_id", "attempted_at"])
          .execute();
      },
    },
  };
}

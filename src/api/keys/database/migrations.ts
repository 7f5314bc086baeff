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
  };
}

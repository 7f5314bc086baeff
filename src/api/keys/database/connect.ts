import { mkdirSync } from "node:fs";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";

import { Kysely, PostgresDialect, SqliteDialect, type SqliteDatabase } from "kysely";
import { Migrator } from "kysely/migration";
import pg from "pg";

import { keyMigrations } from "./migrations.ts";
import type { KeyDatabaseSchema } from "./schema.ts";

export type KeyDialect = "sqlite" | "postgres";

/** How long a SQLite write waits for another process's write (API workers, the keys CLI) to finish. */
const SQLITE_BUSY_TIMEOUT_MS = 5_000;

/** `postgres://…` or `postgresql://…` is a PostgreSQL server; anything else is a SQLite file (or `:memory:`). */
export function keyDialectOf(location: string): KeyDialect {
  return /^postgres(?:ql)?:\/\//i.test(location) ? "postgres" : "sqlite";
}

/**
 * Node's built-in `node:sqlite` as Kysely's SQLite dialect expects a database (the better-sqlite3
 * shape): statements take their parameters as one array, and say whether they return rows.
 */
function asKyselySqlite(db: DatabaseSync): SqliteDatabase {
  return {
    close: () => db.close(),
    prepare(sql: string) {
      const statement = db.prepare(sql);
      return {
        reader: statement.columns().length > 0,
        all: (parameters) => statement.all(...(parameters as never[])),
        run: (parameters) => statement.run(...(parameters as never[])),
        iterate: (parameters) => statement.iterate(...(parameters as never[])),
      };
    },
  };
}

function openSqlite(file: string): DatabaseSync {
  if (file !== ":memory:") mkdirSync(path.dirname(file), { recursive: true });
  const db = new DatabaseSync(file, { timeout: SQLITE_BUSY_TIMEOUT_MS });
  // WAL: readers (every API process polling the revision) never wait for a writer.
  if (file !== ":memory:") db.exec("PRAGMA journal_mode = WAL");
  return db;
}

export interface KeyDatabaseConnection {
  db: Kysely<KeyDatabaseSchema>;
  dialect: KeyDialect;
}

/**
 * Opens the key database at `location` and, unless `migrate` is false, brings its schema up to date.
 * API workers forked by one primary pass false: the primary migrated before forking them.
 */
export async function connectKeyDatabase(
  location: string,
  options: { migrate?: boolean; poolSize?: number; onIdleConnectionError?: (error: Error) => void } = {},
): Promise<KeyDatabaseConnection> {
  const dialect = keyDialectOf(location);
  const sqlite = dialect === "sqlite" ? openSqlite(location) : undefined;
  let dialectInstance;
  if (sqlite === undefined) {
    const pool = new pg.Pool({ connectionString: location, max: options.poolSize ?? 4 });
    // A pooled connection that breaks while idle (server restart, network) is an 'error' event, which
    // would end the process unhandled; the pool drops that connection and the next query opens another.
    pool.on("error", options.onIdleConnectionError ?? (() => undefined));
    dialectInstance = new PostgresDialect({ pool });
  } else {
    dialectInstance = new SqliteDialect({ database: asKyselySqlite(sqlite) });
  }
  const db = new Kysely<KeyDatabaseSchema>({ dialect: dialectInstance });
  try {
    if (options.migrate !== false) {
      if (sqlite === undefined) await migrateKeyDatabase(db, dialect);
      else await holdingSqliteWriteLock(sqlite, () => migrateKeyDatabase(db, dialect));
    }
    return { db, dialect };
  } catch (error) {
    await db.destroy();
    throw error;
  }
}

/**
 * Kysely migrates SQLite outside a transaction (it counts SQLite's DDL as not transactional), so two
 * processes opening one file at once (API workers, the keys CLI) could both run a migration. The
 * migration runs on the same single connection inside `BEGIN IMMEDIATE`, which takes SQLite's write lock
 * at once: the second process waits (busy timeout), then finds the migrations applied.
 */
async function holdingSqliteWriteLock(sqlite: DatabaseSync, migrate: () => Promise<void>): Promise<void> {
  sqlite.exec("BEGIN IMMEDIATE");
  try {
    await migrate();
    sqlite.exec("COMMIT");
  } catch (error) {
    sqlite.exec("ROLLBACK");
    throw error;
  }
}

export async function migrateKeyDatabase(db: Kysely<KeyDatabaseSchema>, dialect: KeyDialect): Promise<void> {
  const migrations = keyMigrations(dialect);
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const { error, results } = await migrator.migrateToLatest();
  if (error !== undefined) {
    // The driver's message names the SQL or connection problem; it never holds the connection string.
    const message = (error as Error).message ?? String(error);
    const failed = results?.find((result) => result.status === "Error")?.migrationName;
    // Without a failed migration, the database was not reached (or its migration table not read).
    throw new Error(failed === undefined ? `the key database could not be opened: ${message}` : `key database migration ${failed} failed: ${message}`, { cause: error });
  }
}

import { mkdirSync } from "node:fs";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";

import { Kysely, PostgresDialect, SqliteDialect, type SqliteDatabase } from "kysely";
import { Migrator, type Migration } from "kysely/migration";
import pg from "pg";

export type SqlDialect = "sqlite" | "postgres";

/** How long a SQLite write waits for another process's write to finish. */
const SQLITE_BUSY_TIMEOUT_MS = 5_000;

/** `postgres://…` or `postgresql://…` is a PostgreSQL server; anything else is a SQLite file (or `:memory:`). */
export function dialectOf(location: string): SqlDialect {
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
  // WAL: readers never wait for a writer.
  if (file !== ":memory:") db.exec("PRAGMA journal_mode = WAL");
  return db;
}

export interface DatabaseConnection<Schema> {
  db: Kysely<Schema>;
  dialect: SqlDialect;
}

export interface ConnectOptions {
  /** Bring the schema up to date first (default true); processes forked by one that migrated pass false. */
  migrate?: boolean;
  poolSize?: number;
  onIdleConnectionError?: (error: Error) => void;
}

/**
 * Opens the SQLite file or PostgreSQL server at `location` and brings its schema up to date with
 * `migrations` (Kysely's `Migrator`, which records what ran). `label` names the database in errors
 * ("the key database could not be opened: …"), which never hold the connection string.
 */
export async function connectDatabase<Schema>(
  location: string,
  label: string,
  migrations: (dialect: SqlDialect) => Record<string, Migration>,
  options: ConnectOptions = {},
): Promise<DatabaseConnection<Schema>> {
  const dialect = dialectOf(location);
  const sqlite = dialect === "sqlite" ? openSqlite(location) : undefined;
  let dialectInstance;
  if (sqlite === undefined) {
    const pool = new pg.Pool({ connectionString: location, max: options.poolSize ?? 4 });
    // A pooled connection that breaks while idle (server restart, network) is an 'error' event, which
    // would end the process unhandled; the pool drops that connection and the next query opens another.
    pool.on("error", options.onIdleConnectionError ?? (() => undefined));
    // One that breaks while a query holds it is an 'error' event on the connection itself, which the pool
    // listens to only while it is idle (and Kysely not at all): an API worker died of it when PostgreSQL
    // restarted under load. The query fails with the error; the pool drops the connection on its release.
    pool.on("connect", (client) => client.on("error", () => undefined));
    dialectInstance = new PostgresDialect({ pool });
  } else {
    dialectInstance = new SqliteDialect({ database: asKyselySqlite(sqlite) });
  }
  const db = new Kysely<Schema>({ dialect: dialectInstance });
  try {
    if (options.migrate !== false) {
      const migrate = () => migrateDatabase(db, label, migrations(dialect));
      if (sqlite === undefined) await migrate();
      else await holdingSqliteWriteLock(sqlite, migrate);
    }
    return { db, dialect };
  } catch (error) {
    await db.destroy();
    throw error;
  }
}

/**
 * Kysely migrates SQLite outside a transaction (it counts SQLite's DDL as not transactional), so two
 * processes opening one file at once could both run a migration. The migration runs on the same single
 * connection inside `BEGIN IMMEDIATE`, which takes SQLite's write lock at once: the second process waits
 * (busy timeout), then finds the migrations applied.
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

/** Applies `migrations` in name order (on PostgreSQL under the migrator's advisory lock). */
export async function migrateDatabase<Schema>(db: Kysely<Schema>, label: string, migrations: Record<string, Migration>): Promise<void> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const { error, results } = await migrator.migrateToLatest();
  if (error !== undefined) {
    // The driver's message names the SQL or connection problem; it never holds the connection string.
    const message = error instanceof Error ? error.message : JSON.stringify(error);
    const failed = results?.find((result) => result.status === "Error")?.migrationName;
    // Without a failed migration, the database was not reached (or its migration table not read).
    throw new Error(
      failed === undefined ? `the ${label} could not be opened: ${message}` : `${label} migration ${failed} failed: ${message}`,
      { cause: error },
    );
  }
}

import { connectDatabase, type ConnectOptions, type DatabaseConnection, type SqlDialect } from "../../../common/database.ts";
import { keyMigrations } from "./migrations.ts";
import type { KeyDatabaseSchema } from "./schema.ts";

export type KeyDialect = SqlDialect;
export type KeyDatabaseConnection = DatabaseConnection<KeyDatabaseSchema>;

/**
 * Opens the key database at `location` (a SQLite file, or `postgres://…`) and, unless `migrate` is false,
 * brings its schema up to date. API workers forked by one primary pass false: the primary migrated first.
 */
export function connectKeyDatabase(location: string, options: ConnectOptions = {}): Promise<KeyDatabaseConnection> {
  return connectDatabase<KeyDatabaseSchema>(location, "key database", keyMigrations, options);
}

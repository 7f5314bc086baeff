import { startPostgresServer, type PostgresServer } from "../../src/devnet/postgres-server.ts";
import type { RequiredService } from "./services.ts";

/** What `startPostgres` needs, for `requireService(this, POSTGRES)` when it returns undefined. */
export const POSTGRES: RequiredService = {
  name: "PostgreSQL server",
  missing: "not installed in /usr/lib/postgresql",
  install: "apt-get install postgresql",
};

/** A throwaway PostgreSQL server (src/devnet/postgres-server.ts), or undefined when the machine has none. */
export const startPostgres = startPostgresServer;
export type TestPostgres = PostgresServer;

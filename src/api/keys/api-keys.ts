import { createHash, randomBytes, randomUUID } from "node:crypto";

import { sql, type Kysely } from "kysely";

import { connectKeyDatabase, type KeyDialect } from "./database/connect.ts";
import type { KeyDatabaseSchema } from "./database/schema.ts";

/** What the store keeps about a key: never the key itself. */
export interface ApiKeyRecord {
  id: string;
  name: string;
  createdAt: string;
  revokedAt: string | null;
  /** Requests allowed per calendar month (UTC); null: no quota. */
  monthlyQuota: number | null;
}

/** What a request needs to know about the key it presented. */
export interface VerifiedKey {
  id: string;
  monthlyQuota: number | null;
}

const KEY_PREFIX = "avn_";
/** Largest quota accepted: a count every dialect and JSON hold exactly. */
export const MAX_MONTHLY_QUOTA = Number.MAX_SAFE_INTEGER;

/** SHA-256 of the key: keys are 256 random bits, so a plain hash cannot be brute-forced back to the key. */
function hashKey(key: string): string {
  return createHash("sha256").update(key, "utf8").digest("hex");
}

/** A stored quota as a number: PostgreSQL answers a `bigint` column as a string. */
const quotaOf = (stored: number | string | null): number | null => (stored === null ? null : Number(stored));

function checkQuota(quota: number | null): void {
  if (quota !== null && (!Number.isSafeInteger(quota) || quota < 0))
    throw new Error("a monthly quota must be a whole number of requests, 0 or more");
}

/**
 * API keys, stored only as hashes, in SQLite (embedded default, a file) or PostgreSQL (several API
 * instances on several hosts), through one Kysely query layer. A key is shown once, when created; a lost
 * key is revoked and replaced, never recovered.
 */
export class ApiKeys {
  readonly db: Kysely<KeyDatabaseSchema>;
  readonly dialect: KeyDialect;

  private constructor(db: Kysely<KeyDatabaseSchema>, dialect: KeyDialect) {
    this.db = db;
    this.dialect = dialect;
  }

  /** Opens (and unless told otherwise migrates) the database at `location`: a file path or `postgres://…`. */
  static async open(
    location: string,
    options: { migrate?: boolean; onIdleConnectionError?: (error: Error) => void } = {},
  ): Promise<ApiKeys> {
    const { db, dialect } = await connectKeyDatabase(location, options);
    return new ApiKeys(db, dialect);
  }

  /** Creates a key named `name`; the returned `key` exists nowhere else afterwards. */
  async create(name: string, options: { monthlyQuota?: number | null } = {}): Promise<{ record: ApiKeyRecord; key: string }> {
    const trimmed = name.trim();
    if (trimmed.length === 0 || trimmed.length > 100) throw new Error("a key name must have 1 to 100 characters");
    const monthlyQuota = options.monthlyQuota ?? null;
    checkQuota(monthlyQuota);
    const key = `${KEY_PREFIX}${randomBytes(32).toString("base64url")}`;
    const record: ApiKeyRecord = { id: randomUUID(), name: trimmed, createdAt: new Date().toISOString(), revokedAt: null, monthlyQuota };
    await this.db
      .insertInto("api_keys")
      .values({
        id: record.id,
        name: record.name,
        key_hash: hashKey(key),
        created_at: record.createdAt,
        revoked_at: null,
        monthly_quota: monthlyQuota,
      })
      .execute();
    return { record, key };
  }

  async list(): Promise<ApiKeyRecord[]> {
    const rows = await this.db
      .selectFrom("api_keys")
      .select(["id", "name", "created_at", "revoked_at", "monthly_quota"])
      .orderBy("created_at")
      .orderBy("id")
      .execute();
    return rows.map((row) => ({
      id: row.id,
      name: row.name,
      createdAt: row.created_at,
      revokedAt: row.revoked_at,
      monthlyQuota: quotaOf(row.monthly_quota),
    }));
  }

  /** Revokes the key with `id`; false when there is no such key or it was revoked already. */
  async revoke(id: string): Promise<boolean> {
    return this.#changeAndBumpRevision((db) =>
      db
        .updateTable("api_keys")
        .set({ revoked_at: new Date().toISOString() })
        .where("id", "=", id)
        .where("revoked_at", "is", null)
        .executeTakeFirst(),
    );
  }

  /** Sets (or with null removes) the monthly quota of the live key `id`; false when there is no such key. */
  async setMonthlyQuota(id: string, monthlyQuota: number | null): Promise<boolean> {
    checkQuota(monthlyQuota);
    return this.#changeAndBumpRevision((db) =>
      db
        .updateTable("api_keys")
        .set({ monthly_quota: monthlyQuota })
        .where("id", "=", id)
        .where("revoked_at", "is", null)
        .executeTakeFirst(),
    );
  }

  /** The live key `key`, or undefined for an unknown or revoked one. */
  async verify(key: string): Promise<VerifiedKey | undefined> {
    if (!key.startsWith(KEY_PREFIX) || key.length > 200) return undefined;
    const row = await this.db
      .selectFrom("api_keys")
      .select(["id", "monthly_quota"])
      .where("key_hash", "=", hashKey(key))
      .where("revoked_at", "is", null)
      .executeTakeFirst();
    return row === undefined ? undefined : { id: row.id, monthlyQuota: quotaOf(row.monthly_quota) };
  }

  /**
   * Grows with every change a running API must see (a revocation, a quota change), by this process or
   * another one on the same database: one row, read often by each API process (`KeyVerifier`).
   */
  async revision(): Promise<string> {
    const row = await this.db.selectFrom("api_key_revision").select("revision").where("id", "=", 1).executeTakeFirstOrThrow();
    return String(row.revision);
  }

  async close(): Promise<void> {
    await this.db.destroy();
  }

  /** Runs `change` and, when it changed a row, bumps the revision in the same transaction. */
  async #changeAndBumpRevision(change: (db: Kysely<KeyDatabaseSchema>) => Promise<{ numUpdatedRows: bigint }>): Promise<boolean> {
    return this.db.transaction().execute(async (transaction) => {
      const { numUpdatedRows } = await change(transaction);
      if (numUpdatedRows !== 1n) return false;
      await transaction
        .updateTable("api_key_revision")
        .set({ revision: sql`revision + 1` })
        .where("id", "=", 1)
        .execute();
      return true;
    });
  }
}

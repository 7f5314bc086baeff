import { createHash, randomBytes, randomUUID } from "node:crypto";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";

/** What the store keeps about a key: never the key itself. */
export interface ApiKeyRecord {
  id: string;
  name: string;
  createdAt: string;
  revokedAt: string | null;
}

const KEY_PREFIX = "avn_";

/** SHA-256 of the key: keys are 256 random bits, so a plain hash cannot be brute-forced back to the key. */
function hashKey(key: string): string {
  return createHash("sha256").update(key, "utf8").digest("hex");
}

/**
 * API keys in an embedded SQLite database file (Node's built-in `node:sqlite`), stored only as hashes.
 * A key is shown once, when created; a lost key is revoked and replaced, never recovered.
 */
export class ApiKeyStore {
  readonly #db: DatabaseSync;
  #verifyStatement: ReturnType<DatabaseSync["prepare"]> | undefined;
  #stampStatement: ReturnType<DatabaseSync["prepare"]> | undefined;

  constructor(file: string) {
    if (file !== ":memory:") mkdirSync(path.dirname(file), { recursive: true });
    this.#db = new DatabaseSync(file);
    this.#db.exec(`
      PRAGMA journal_mode = WAL;
      CREATE TABLE IF NOT EXISTS api_keys (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        key_hash TEXT NOT NULL UNIQUE,
        created_at TEXT NOT NULL,
        revoked_at TEXT
      ) STRICT;
      CREATE INDEX IF NOT EXISTS api_keys_revoked_at ON api_keys (revoked_at);
    `);
  }

  /** Creates a key named `name`; the returned `key` exists nowhere else afterwards. */
  create(name: string): { record: ApiKeyRecord; key: string } {
    const trimmed = name.trim();
    if (trimmed.length === 0 || trimmed.length > 100) throw new Error("a key name must have 1 to 100 characters");
    const key = `${KEY_PREFIX}${randomBytes(32).toString("base64url")}`;
    const record: ApiKeyRecord = { id: randomUUID(), name: trimmed, createdAt: new Date().toISOString(), revokedAt: null };
    this.#db
      .prepare("INSERT INTO api_keys (id, name, key_hash, created_at) VALUES (?, ?, ?, ?)")
      .run(record.id, record.name, hashKey(key), record.createdAt);
    return { record, key };
  }

  list(): ApiKeyRecord[] {
    const rows = this.#db.prepare("SELECT id, name, created_at, revoked_at FROM api_keys ORDER BY created_at").all() as Array<{
      id: string;
      name: string;
      created_at: string;
      revoked_at: string | null;
    }>;
    return rows.map((row) => ({ id: row.id, name: row.name, createdAt: row.created_at, revokedAt: row.revoked_at }));
  }

  /** Revokes the key with `id`; false when there is no such key or it was revoked already. */
  revoke(id: string): boolean {
    const result = this.#db.prepare("UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL").run(new Date().toISOString(), id);
    return Number(result.changes) === 1;
  }

  /** The id of the live key `key`, or undefined for an unknown or revoked one. */
  verify(key: string): string | undefined {
    if (!key.startsWith(KEY_PREFIX) || key.length > 200) return undefined;
    // Prepared once: this runs on every API request.
    this.#verifyStatement ??= this.#db.prepare("SELECT id FROM api_keys WHERE key_hash = ? AND revoked_at IS NULL");
    const row = this.#verifyStatement.get(hashKey(key)) as
      | { id: string }
      | undefined;
    return row?.id;
  }

  /**
   * Changes whenever a key is revoked, by this process or another one on the same database: the number
   * of revoked keys and the latest revocation time. Read often by each API process (`CachedKeyVerifier`).
   */
  revocationStamp(): string {
    this.#stampStatement ??= this.#db.prepare("SELECT count(*) AS revoked, max(revoked_at) AS latest FROM api_keys WHERE revoked_at IS NOT NULL");
    const row = this.#stampStatement.get() as { revoked: number; latest: string | null };
    return `${row.revoked}:${row.latest ?? ""}`;
  }

  close(): void {
    this.#db.close();
  }
}

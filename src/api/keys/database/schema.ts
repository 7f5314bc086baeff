/**
 * The key database's tables as Kysely sees them. Times are ISO-8601 UTC text in both dialects, so the
 * two stores hold and compare exactly the same values (ISO text sorts chronologically).
 */
export interface KeyDatabaseSchema {
  api_keys: {
    id: string;
    name: string;
    /** SHA-256 of the key, hex: the key itself is stored nowhere. */
    key_hash: string;
    created_at: string;
    revoked_at: string | null;
    /** Requests allowed per calendar month (UTC); null: no quota. A string from PostgreSQL (`bigint`). */
    monthly_quota: number | string | null;
  };
  /** One row (id 1) whose revision grows with every change a running API must see (revocation, quota). */
  api_key_revision: {
    id: number;
    revision: number | string;
  };
  /** Requests per key, UTC day, endpoint and status class, added up by each API process's flushes. */
  api_usage: {
    key_id: string;
    day: string;
    endpoint: string;
    status_class: string;
    requests: number | string;
  };
}

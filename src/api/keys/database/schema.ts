import type { Generated } from "kysely";

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
  webhook_subscriptions: {
    id: string;
    key_id: string;
    chain: string;
    owner: string;
    asset: string;
    /** The ERC-1155 token id in decimal, or '' for none. */
    token_id: string;
    url: string;
    /** The HMAC key of its deliveries' signatures: kept, since every delivery is signed with it. */
    secret: string;
    attest: number;
    /** active, failing (a delivery was refused for the whole retry window) or deleted. */
    state: string;
    created_at: string;
    deleted_at: string | null;
    /** The balance at creation, and the block or slot it was read at (decimal text). */
    baseline_balance: string;
    baseline_block: string;
    /** The `subscriptions` revision of its last change: the followers load what changed after theirs. */
    change_seq: number | string;
  };
  webhook_state: {
    name: string;
    revision: number | string;
    owner: string | null;
    until_ms: number | string | null;
  };
  /** How far the follower of each chain got: the last block or slot whose changes are recorded. */
  webhook_cursors: {
    chain: string;
    block: string;
    revision: number | string;
    recent: string;
  };
  /** The last balance recorded of each watched pair, and at which block or slot. */
  webhook_pairs: {
    chain: string;
    owner: string;
    asset: string;
    token_id: string;
    balance: string;
    block: string;
  };
  /** The changes to deliver, one per subscription: the queue. */
  webhook_events: {
    seq: Generated<number | string>;
    id: string;
    subscription_id: string;
    /** The delivery's JSON body, byte for byte the same on every attempt. */
    payload: string;
    observed_at: string;
    /** pending, delivered, failed (refused for the whole retry window) or cancelled (its subscription deleted). */
    state: string;
    attempts: number;
    next_attempt_ms: number | string;
    first_attempt_ms: number | string | null;
    lease_owner: string | null;
    lease_until_ms: number | string | null;
  };
  webhook_attempts: {
    event_id: string;
    subscription_id: string;
    attempted_at: string;
    ok: number;
    status: number | null;
    latency_ms: number;
    error: string | null;
  };
}

import { sql, type Kysely } from "kysely";

import type { KeyDatabaseSchema } from "../keys/database/schema.ts";

/** One counter: requests of one key to one endpoint on one UTC day with one status class. */
export interface UsageRow {
  keyId: string;
  /** `YYYY-MM-DD`, UTC. */
  day: string;
  endpoint: string;
  /** `2xx`, `4xx`, `5xx`, … and `429` on its own: refusals by the rate limit or the quota. */
  statusClass: string;
  requests: number;
}

/** Requests refused by the rate limit or the monthly quota: counted, but not against the quota. */
export const REFUSED_STATUS_CLASS = "429";

/**
 * What a key's monthly quota counts: its answered requests, 2xx and 4xx (a bad request costs the service
 * as much as a good one), but neither refusals (429) nor the service's own failures (5xx).
 */
const NOT_AGAINST_QUOTA = [REFUSED_STATUS_CLASS, "5xx"];

export function countsAgainstQuota(statusClass: string): boolean {
  return !NOT_AGAINST_QUOTA.includes(statusClass);
}

export function statusClassOf(status: number): string {
  return status === 429 ? REFUSED_STATUS_CLASS : `${Math.floor(status / 100)}xx`;
}

/** The first day of the month after `month` (`YYYY-MM`), as `YYYY-MM-DD`. */
function nextMonthStart(month: string): string {
  const [year, monthNumber] = month.split("-").map(Number);
  const next = new Date(Date.UTC(year, monthNumber, 1));
  return next.toISOString().slice(0, 10);
}

/** Most keys named in one `in (…)` list. */
const KEYS_PER_QUERY = 500;

/** The usage counters in the key database (SQLite or PostgreSQL). */
export class UsageStore {
  readonly #db: Kysely<KeyDatabaseSchema>;

  constructor(db: Kysely<KeyDatabaseSchema>) {
    this.#db = db;
  }

  /** Adds `rows` to the counters in one transaction: all of them or, on failure, none. */
  async add(rows: readonly UsageRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.#db.transaction().execute(async (transaction) => {
      // Chunks keep each statement's parameter count far below SQLite's and PostgreSQL's limits.
      for (let start = 0; start < rows.length; start += 200) {
        const chunk = rows.slice(start, start + 200);
        await transaction
          .insertInto("api_usage")
          .values(
            chunk.map((row) => ({
              key_id: row.keyId,
              day: row.day,
              endpoint: row.endpoint,
              status_class: row.statusClass,
              requests: row.requests,
            })),
          )
          .onConflict((conflict) =>
            conflict
              .columns(["key_id", "day", "endpoint", "status_class"])
              .doUpdateSet({ requests: sql`api_usage.requests + excluded.requests` }),
          )
          .execute();
      }
    });
  }

  /** Requests counted against the quota in `month` (`YYYY-MM`, UTC) for each of `keyIds` that made any. */
  async monthTotals(keyIds: readonly string[], month: string): Promise<Map<string, number>> {
    const totals = new Map<string, number>();
    for (let start = 0; start < keyIds.length; start += KEYS_PER_QUERY) {
      const rows = await this.#db
        .selectFrom("api_usage")
        .select(["key_id", (eb) => eb.fn.sum<string | number>("requests").as("requests")])
        .where("key_id", "in", keyIds.slice(start, start + KEYS_PER_QUERY))
        .where("day", ">=", `${month}-01`)
        .where("day", "<", nextMonthStart(month))
        .where("status_class", "not in", NOT_AGAINST_QUOTA)
        .groupBy("key_id")
        .execute();
      for (const row of rows) totals.set(row.key_id, Number(row.requests));
    }
    return totals;
  }

  /** The counters, optionally of one key and from one day on, oldest day first. */
  async report(options: { keyId?: string; fromDay?: string } = {}): Promise<UsageRow[]> {
    let query = this.#db.selectFrom("api_usage").selectAll();
    if (options.keyId !== undefined) query = query.where("key_id", "=", options.keyId);
    if (options.fromDay !== undefined) query = query.where("day", ">=", options.fromDay);
    const rows = await query.orderBy("day").orderBy("key_id").orderBy("endpoint").orderBy("status_class").execute();
    return rows.map((row) => ({
      keyId: row.key_id,
      day: row.day,
      endpoint: row.endpoint,
      statusClass: row.status_class,
      requests: Number(row.requests),
    }));
  }
}

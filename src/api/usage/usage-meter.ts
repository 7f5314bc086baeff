import type { VerifiedKey } from "../keys/api-keys.ts";
import { countsAgainstQuota, statusClassOf, type UsageRow } from "./usage-store.ts";

/** Where the meter writes its counters and reads the month's totals (the `UsageStore`). */
export interface UsageSink {
  add(rows: readonly UsageRow[]): Promise<void>;
  monthTotals(keyIds: readonly string[], month: string): Promise<Map<string, number>>;
}

export interface UsageMeterOptions {
  /** How often counters are written; a crash loses at most this much counting. */
  flushMs?: number;
  now?: () => number;
  /** Told when a flush fails; its counters are kept for the next one. */
  onFlushError?: (error: unknown) => void;
}

export const DEFAULT_USAGE_FLUSH_MS = 5_000;

const dayOf = (time: number) => new Date(time).toISOString().slice(0, 10);
const monthOfDay = (day: string) => day.slice(0, 7);

/**
 * Usage metering and monthly quotas without a database round trip per request. Each request adds one to
 * an in-memory counter (key, UTC day, endpoint, status class); every `flushMs` the counters go to the
 * database in one transaction, added to what other processes wrote (an upsert that sums), and the month's
 * totals of the keys with a quota are read back. A failed flush keeps its counters for the next one, and
 * `close()` flushes, so a graceful shutdown loses nothing; a crash loses at most one interval.
 *
 * A key's month usage is the database total (every process's flushes) plus what this process counted
 * since: exact for one process, and behind by at most one flush interval of the other processes' traffic
 * when several share a database, so a quota can be overshot by that much, never undershot.
 */
export class UsageMeter {
  readonly #sink: UsageSink;
  readonly #now: () => number;
  readonly #onFlushError: (error: unknown) => void;
  readonly #timer: NodeJS.Timeout;
  /** Counters not yet written, by `keyId \n day \n endpoint \n statusClass`. */
  #pending = new Map<string, number>();
  /** Quota-counted requests per key not yet in `#monthTotals` (pending plus the flush under way). */
  #unsettled = new Map<string, number>();
  #flushingCounted = new Map<string, number>();
  /** The month the totals below are for; they start over when the month changes. */
  #month: string;
  #monthTotals = new Map<string, number>();
  /** Keys with a quota seen by this process: their totals are read back at each flush. */
  readonly #quotaKeys = new Set<string>();
  #flushing: Promise<void> | undefined;
  #day = "";
  #dayStarts = 0;
  #dayEnds = 0;
  #closed = false;

  constructor(sink: UsageSink, options: UsageMeterOptions = {}) {
    this.#sink = sink;
    this.#now = options.now ?? Date.now;
    this.#onFlushError = options.onFlushError ?? (() => undefined);
    this.#month = monthOfDay(dayOf(this.#now()));
    this.#timer = setInterval(() => void this.flush(), options.flushMs ?? DEFAULT_USAGE_FLUSH_MS);
    this.#timer.unref();
  }

  /** Counts one answered request of key `keyId` to `endpoint` (a route template) with HTTP `status`. */
  record(keyId: string, endpoint: string, status: number): void {
    const day = this.#today();
    const statusClass = statusClassOf(status);
    const counter = `${keyId}\n${day}\n${endpoint}\n${statusClass}`;
    this.#pending.set(counter, (this.#pending.get(counter) ?? 0) + 1);
    if (countsAgainstQuota(statusClass)) {
      this.#rollMonth(monthOfDay(day));
      this.#unsettled.set(keyId, (this.#unsettled.get(keyId) ?? 0) + 1);
    }
  }

  /** Requests of `keyId` counted against its quota this month (UTC), as far as this process knows. */
  monthlyUsed(keyId: string): number {
    this.#rollMonth(monthOfDay(this.#today()));
    return (this.#monthTotals.get(keyId) ?? 0) + (this.#unsettled.get(keyId) ?? 0) + (this.#flushingCounted.get(keyId) ?? 0);
  }

  /** Requests `key` may still make this month: Infinity without a quota, 0 or less once it is used up. */
  remainingQuota(key: VerifiedKey): number {
    if (key.monthlyQuota === null) return Infinity;
    if (!this.#quotaKeys.has(key.id)) {
      // First sight of this key in this process: read its total now rather than at the next flush.
      this.#quotaKeys.add(key.id);
      void this.flush();
    }
    return key.monthlyQuota - this.monthlyUsed(key.id);
  }

  /** Writes the counters and reads back the month's totals; one flush at a time. */
  flush(): Promise<void> {
    this.#flushing ??= this.#flushOnce().finally(() => {
      this.#flushing = undefined;
    });
    return this.#flushing;
  }

  /** Stops the timer and writes what is left (call it after the server has finished its requests). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#timer);
    await this.#flushing;
    await this.flush();
  }

  async #flushOnce(): Promise<void> {
    const pending = this.#pending;
    const counted = this.#unsettled;
    this.#pending = new Map();
    this.#unsettled = new Map();
    this.#flushingCounted = counted;
    const month = this.#month;
    try {
      await this.#sink.add(
        [...pending].map(([counter, requests]) => {
          const [keyId, day, endpoint, statusClass] = counter.split("\n");
          return { keyId, day, endpoint, statusClass, requests };
        }),
      );
    } catch (error) {
      // Nothing is lost: the counters go back for the next flush.
      for (const [counter, requests] of pending) this.#pending.set(counter, (this.#pending.get(counter) ?? 0) + requests);
      // They count against the quota again, unless the month changed meanwhile.
      if (this.#month === month)
        for (const [keyId, requests] of counted) this.#unsettled.set(keyId, (this.#unsettled.get(keyId) ?? 0) + requests);
      this.#flushingCounted = new Map();
      this.#onFlushError(error);
      return;
    }
    try {
      const totals = this.#quotaKeys.size === 0 ? new Map<string, number>() : await this.#sink.monthTotals([...this.#quotaKeys], month);
      // The written counts are in the totals now; only if the month is still the same do they apply.
      if (this.#month === month) this.#monthTotals = totals;
    } catch (error) {
      // The counts are written, but the totals are stale: keep them as an estimate until the next read.
      if (this.#month === month)
        for (const [keyId, requests] of counted) this.#monthTotals.set(keyId, (this.#monthTotals.get(keyId) ?? 0) + requests);
      this.#onFlushError(error);
    } finally {
      this.#flushingCounted = new Map();
    }
  }

  /** The UTC day now, formatted once per day rather than per request. */
  #today(): string {
    const now = this.#now();
    if (now >= this.#dayEnds || now < this.#dayStarts) {
      this.#day = dayOf(now);
      this.#dayStarts = Date.parse(`${this.#day}T00:00:00Z`);
      this.#dayEnds = this.#dayStarts + 86_400_000;
    }
    return this.#day;
  }

  #rollMonth(month: string): void {
    if (month === this.#month) return;
    this.#month = month;
    // Everything counted so far belongs to the month that ended, also what a flush is writing now.
    this.#monthTotals = new Map();
    this.#unsettled = new Map();
    this.#flushingCounted = new Map();
  }
}

import type { VerifiedKey } from "../keys/api-keys.ts";
import { countsAgainstQuota, statusClassOf, type UsageRow } from "./usage-store.ts";
import { AvnError } from "@avn/protocol/errors";

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

/**
 * The month's total of a key could not be read from the database on this process's first sight of the key:
 * its request is refused (a 500, like a key that cannot be verified), never answered as if the key had used
 * nothing. The key's next request tries again.
 */
export class MonthTotalUnavailableError extends AvnError<"USAGE_UNAVAILABLE"> {
  readonly keyId: string;

  constructor(keyId: string, options?: { cause?: unknown }) {
    super("USAGE_UNAVAILABLE", `the month's usage of key ${keyId} could not be read`, options);
    this.name = "MonthTotalUnavailableError";
    this.keyId = keyId;
  }
}

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
 *
 * A process that has not read a key's total yet does not know it: a fresh process (after a restart, or a
 * new worker) would otherwise count a key over its quota as having used nothing. So the first sight of a
 * key with a quota reads its total (`whenQuotaKnown`), and the server holds the key's requests until then;
 * afterwards the key is checked from memory, without waiting.
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
  /** Keys of `#quotaKeys` whose month total this process has read: their checks need not wait. */
  readonly #known = new Set<string>();
  /** First reads under way, one per key: concurrent first requests of a key wait for the same read. */
  readonly #firstReads = new Map<string, Promise<void>>();
  /** The flush under way; it settles with its failure, undefined when it wrote and read back. */
  #flushing: Promise<unknown> | undefined;
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

  /**
   * Requests `key` may still make this month, as far as this process knows: Infinity without a quota, 0 or
   * less once it is used up. Exact (within the bounds above) once `whenQuotaKnown(key)` has settled; before
   * that, this process's own count only, so it starts the read of the key's total.
   */
  remainingQuota(key: VerifiedKey): number {
    if (key.monthlyQuota === null) return Infinity;
    // A failed read is told through onFlushError; whoever waits for it gets the error as well.
    if (!this.#known.has(key.id)) this.whenQuotaKnown(key)?.catch(() => undefined);
    return key.monthlyQuota - this.monthlyUsed(key.id);
  }

  /**
   * Undefined when this process knows `key`'s month total (or the key has no quota): its quota can be
   * checked now. Otherwise this process has not seen the key yet, and the promise settles once the total is
   * read from the database (one read for all the requests of the key that arrive meanwhile, and for the
   * other keys first seen then: the next flush); it rejects with `MonthTotalUnavailableError` when the
   * total cannot be read, and the next call tries again.
   */
  whenQuotaKnown(key: VerifiedKey): Promise<void> | undefined {
    if (key.monthlyQuota === null || this.#known.has(key.id)) return undefined;
    let read = this.#firstReads.get(key.id);
    if (read === undefined) {
      read = this.#readFirstTotal(key.id).finally(() => this.#firstReads.delete(key.id));
      this.#firstReads.set(key.id, read);
    }
    return read;
  }

  /** Writes the counters and reads back the month's totals; one flush at a time. */
  async flush(): Promise<void> {
    await this.#flush();
  }

  /** `flush()`, settling with the flush's failure (undefined when it wrote and read back). */
  #flush(): Promise<unknown> {
    this.#flushing ??= this.#flushOnce().finally(() => {
      this.#flushing = undefined;
    });
    return this.#flushing;
  }

  async #readFirstTotal(keyId: string): Promise<void> {
    this.#quotaKeys.add(keyId);
    // A flush under way may have read its totals before the key was added, or the month may change while
    // one reads: then the next flush reads the key's total.
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const failure = await this.#flush();
      if (this.#known.has(keyId)) return;
      if (failure !== undefined) throw new MonthTotalUnavailableError(keyId, { cause: failure });
    }
    throw new MonthTotalUnavailableError(keyId);
  }

  /** Stops the timer and writes what is left (call it after the server has finished its requests). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#timer);
    await this.#flushing;
    await this.flush();
  }

  async #flushOnce(): Promise<unknown> {
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
      return error;
    }
    // The keys added until now are read; one added while the read is under way waits for the next flush.
    const keys = [...this.#quotaKeys];
    try {
      const totals = keys.length === 0 ? new Map<string, number>() : await this.#sink.monthTotals(keys, month);
      // The written counts are in the totals now; only if the month is still the same do they apply.
      if (this.#month === month) {
        this.#monthTotals = totals;
        for (const keyId of keys) this.#known.add(keyId);
      }
      return undefined;
    } catch (error) {
      // The counts are written, but the totals are stale: keep them as an estimate until the next read.
      if (this.#month === month)
        for (const [keyId, requests] of counted) this.#monthTotals.set(keyId, (this.#monthTotals.get(keyId) ?? 0) + requests);
      this.#onFlushError(error);
      return error;
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

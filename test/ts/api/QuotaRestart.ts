import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

import { expect } from "chai";

import { ApiKeys } from "../../../src/api/keys/api-keys.ts";
import { MonthTotalUnavailableError, UsageMeter, type UsageSink } from "../../../src/api/usage/usage-meter.ts";
import { UsageStore } from "../../../src/api/usage/usage-store.ts";
import { startSourceFixtures, type SourceFixtures } from "../../../src/devnet/source-chains.ts";
import { postOnOwnConnection, spawnApiProcess, workersThatRefused } from "../../helpers/api-process.ts";
import { POSTGRES, startPostgres } from "../../helpers/postgres.ts";
import { requireService } from "../../helpers/services.ts";

const today = () => new Date().toISOString().slice(0, 10);

/**
 * A key with `quota` requests a month, of which `used` are already in the key database for this month
 * (answered by processes that have since stopped: 2xx and 4xx, which count, and 429s and 5xx, which do not).
 */
async function seedKey(keys: ApiKeys, name: string, quota: number, used: number) {
  const created = await keys.create(name, { monthlyQuota: quota });
  const row = (statusClass: string, requests: number) => ({
    keyId: created.record.id,
    day: today(),
    endpoint: "/api/ccq-evm",
    statusClass,
    requests,
  });
  const fourXx = Math.floor(used / 10);
  await new UsageStore(keys.db).add([row("2xx", used - fourXx), row("4xx", fourXx), row("429", 50), row("5xx", 7)]);
  return created;
}

describe("API: a process's first sight of a key with a monthly quota", function () {
  this.timeout(120_000);
  let dir: string;
  let files = 0;
  before(async function () {
    dir = await mkdtemp(path.join(tmpdir(), "quota-restart-"));
  });
  after(async function () {
    await rm(dir, { recursive: true, force: true });
  });

  describe("UsageMeter, fresh, over a key database that already holds the month's usage", function () {
    let keys: ApiKeys;
    beforeEach(async function () {
      keys = await ApiKeys.open(path.join(dir, `meter-${++files}.sqlite`));
    });
    afterEach(async function () {
      await keys.close();
    });

    /** The key database's usage store, counting the month-total reads. */
    const countingSink = (store: UsageStore) => {
      const reads: string[][] = [];
      const sink: UsageSink = {
        add: (rows) => store.add(rows),
        monthTotals: (keyIds, month) => {
          reads.push([...keyIds]);
          return store.monthTotals(keyIds, month);
        },
      };
      return { sink, reads };
    };

    it("waits for the month's total on the first check of a key (one read for concurrent checks), then knows it without waiting", async function () {
      const over = await seedKey(keys, "over", 1_000, 1_000);
      const near = await seedKey(keys, "near", 1_000, 990);
      const { sink, reads } = countingSink(new UsageStore(keys.db));
      const meter = new UsageMeter(sink, { flushMs: 3_600_000 });
      try {
        const overKey = { id: over.record.id, monthlyQuota: 1_000 };
        const nearKey = { id: near.record.id, monthlyQuota: 1_000 };
        const firstChecks = [...Array.from({ length: 20 }, () => meter.whenQuotaKnown(overKey)), meter.whenQuotaKnown(nearKey)];
        expect(firstChecks.every((check) => check instanceof Promise)).to.equal(true, "a key not seen before must be waited for");
        expect(new Set(firstChecks.slice(0, 20)).size, "concurrent first checks of one key share one read").to.equal(1);
        await Promise.all(firstChecks.filter((check) => check !== undefined));
        expect(reads, "one read for both keys").to.have.length(1);
        expect(reads[0]).to.have.members([over.record.id, near.record.id]);

        expect(meter.remainingQuota(overKey), "1,000 used of 1,000 (the 429s and 5xx do not count)").to.equal(0);
        expect(meter.remainingQuota(nearKey)).to.equal(10);
        expect(meter.whenQuotaKnown(overKey), "a known key is checked at once").to.equal(undefined);
        expect(meter.whenQuotaKnown({ id: "no-quota", monthlyQuota: null })).to.equal(undefined);
        meter.record(nearKey.id, "/api/ccq-evm", 200);
        expect(meter.remainingQuota(nearKey)).to.equal(9);
        expect(reads, "no further read for known keys").to.have.length(1);
      } finally {
        await meter.close();
      }
    });

    it("rejects the first check when the month's total cannot be read, never counting the key as unused, and reads again on the next", async function () {
      const over = await seedKey(keys, "over", 1_000, 1_000);
      const store = new UsageStore(keys.db);
      let databaseAway = true;
      const flushErrors: unknown[] = [];
      const meter = new UsageMeter(
        {
          add: (rows) => store.add(rows),
          monthTotals: async (keyIds, month) => {
            if (databaseAway) throw new Error("database away");
            return store.monthTotals(keyIds, month);
          },
        },
        { flushMs: 3_600_000, onFlushError: (error) => flushErrors.push(error) },
      );
      try {
        const key = { id: over.record.id, monthlyQuota: 1_000 };
        const failure = await meter.whenQuotaKnown(key)!.then(
          () => undefined,
          (error: unknown) => error,
        );
        expect(failure).to.be.instanceOf(MonthTotalUnavailableError);
        expect((failure as Error).cause).to.have.property("message", "database away");
        expect(flushErrors).to.have.length(1);
        const retry = meter.whenQuotaKnown(key);
        expect(retry, "still unknown: the next check waits for a read again").to.be.instanceOf(Promise);
        databaseAway = false;
        await retry;
        expect(meter.remainingQuota(key)).to.equal(0);
      } finally {
        await meter.close();
      }
    });

    it("reads a key first seen while a flush is reading the others' totals in the next flush, not counting it as unused", async function () {
      const first = await seedKey(keys, "first", 1_000, 10);
      const late = await seedKey(keys, "late", 1_000, 1_000);
      const store = new UsageStore(keys.db);
      let releaseRead: () => void = () => undefined;
      const readStarted: string[][] = [];
      const meter = new UsageMeter(
        {
          add: (rows) => store.add(rows),
          monthTotals: async (keyIds, month) => {
            readStarted.push([...keyIds]);
            if (readStarted.length === 1) await new Promise<void>((resolve) => (releaseRead = resolve));
            return store.monthTotals(keyIds, month);
          },
        },
        { flushMs: 3_600_000 },
      );
      try {
        const firstRead = meter.whenQuotaKnown({ id: first.record.id, monthlyQuota: 1_000 });
        while (readStarted.length === 0) await new Promise((resolve) => setTimeout(resolve, 1));
        // The flush under way reads `first` only; `late` arrives now.
        const lateKey = { id: late.record.id, monthlyQuota: 1_000 };
        const lateRead = meter.whenQuotaKnown(lateKey);
        releaseRead();
        await firstRead;
        expect(meter.whenQuotaKnown(lateKey), "the flush that read without it does not make it known").to.equal(lateRead);
        await lateRead;
        expect(readStarted.map((ids) => ids.length)).to.deep.equal([1, 2]);
        expect(meter.remainingQuota(lateKey)).to.equal(0);
      } finally {
        await meter.close();
      }
    });
  });

  describe("two API processes (`npm run api`) on one key database", function () {
    let sources: SourceFixtures;
    before(async function () {
      sources = await startSourceFixtures();
    });
    after(async function () {
      await sources?.stop();
    });

    /** `npm run api`; the flush timer plays no part: only the first sight's read can tell a process the totals. */
    const spawnApi = (env: Record<string, string>) => spawnApiProcess(sources, { USAGE_FLUSH_MS: "300000", LOG_LEVEL: "info", ...env });
    const ask = (port: number, key: string) => postOnOwnConnection(sources, port, key);

    const neitherAnswersOverQuota = async (location: string) => {
      const admin = await ApiKeys.open(location);
      const over = await seedKey(admin, "over quota", 1_000, 1_000);
      const near = await seedKey(admin, "3 left", 1_000, 997);
      const control = await admin.create("no quota");
      await admin.close();
      // One process, and one cluster of two workers: each worker is a process that sees the key first.
      const apis: Array<Awaited<ReturnType<typeof spawnApi>>> = [];
      try {
        const starting = [spawnApi({ API_KEYS_DB: location, API_WORKERS: "1" }), spawnApi({ API_KEYS_DB: location, API_WORKERS: "2" })];
        for (const api of await Promise.allSettled(starting)) if (api.status === "fulfilled") apis.push(api.value);
        if (apis.length < 2) throw new Error("an API process did not start");
        // The very first keyed requests each process gets, 10 at once on their own connections.
        const first = await Promise.all(apis.map((api) => Promise.all(Array.from({ length: 10 }, () => ask(api.port, over.key)))));
        for (const answers of first) {
          expect(
            answers.map((answer) => answer.status),
            "a key over its quota is refused from the first request on",
          ).to.deep.equal(Array(10).fill(429));
          for (const answer of answers) {
            expect(JSON.parse(answer.body)).to.deep.equal({ status: 429, message: "Monthly quota exceeded" });
            expect(Number(answer.retryAfter)).to.be.above(0);
          }
        }
        const servedBy = await workersThatRefused(apis[1], 10);
        expect(servedBy.size, "the cluster's first requests reached both of its workers").to.equal(2);
        // 3 left: the first process's first request already knows it (3 answers, then refused).
        const single = apis[0];
        const nearStatuses: number[] = [];
        for (let i = 0; i < 4; i += 1) nearStatuses.push((await ask(single.port, near.key)).status);
        expect(nearStatuses).to.deep.equal([200, 200, 200, 429]);
        for (const api of apis) expect((await ask(api.port, control.key)).status, "a key without a quota is served").to.equal(200);
        expect(await Promise.all(apis.map((api) => api.stop()))).to.deep.equal([0, 0]);
      } finally {
        await Promise.all(apis.map((api) => api.stop()));
      }
    };

    it("SQLite: a key already over its quota is refused with 429 by both, from the first request after start", async function () {
      await neitherAnswersOverQuota(path.join(dir, "shared.sqlite"));
    });

    it("PostgreSQL: a key already over its quota is refused with 429 by both, from the first request after start", async function () {
      const server = await startPostgres();
      if (server === undefined) requireService(this, POSTGRES);
      try {
        await neitherAnswersOverQuota(await server.createDatabase());
      } finally {
        await server.stop();
      }
    });
  });
});

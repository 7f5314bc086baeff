import { EventEmitter, once } from "node:events";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";

import { expect } from "chai";
import { sql } from "kysely";

import { ApiKeys } from "../../../src/api/keys/api-keys.ts";
import { KeyVerifier } from "../../../src/api/keys/key-verifier.ts";
import { UsageMeter, type UsageSink } from "../../../src/api/usage/usage-meter.ts";
import { UsageStore, type UsageRow } from "../../../src/api/usage/usage-store.ts";
import { connectDatabase } from "../../../src/common/database.ts";
import { POSTGRES, startPostgres, type TestPostgres } from "../../helpers/postgres.ts";
import { requireService } from "../../helpers/services.ts";

/**
 * The same behaviour, asked of both key databases. `inParallel` runs the writes of the two "processes"
 * at once (PostgreSQL) or one after the other (SQLite: two connections in one thread would wait on each
 * other's lock synchronously; the API's processes writing one SQLite file at once are tested in
 * ApiWorkers.ts).
 */
function keyDatabaseBehaviour(newLocation: () => Promise<string>, inParallel: boolean) {
  const all = async (tasks: Array<() => Promise<unknown>>) => {
    if (inParallel) await Promise.all(tasks.map((task) => task()));
    else for (const task of tasks) await task();
  };
  it("creates, verifies, lists, revokes keys and changes quotas, bumping the revision on each change", async function () {
    const keys = await ApiKeys.open(await newLocation());
    try {
      const revision0 = await keys.revision();
      const { record, key } = await keys.create("  studio  ", { monthlyQuota: 1_000 });
      expect(record.name).to.equal("studio");
      expect(await keys.verify(key)).to.deep.equal({ id: record.id, monthlyQuota: 1_000 });
      expect(await keys.verify(`${key}x`)).to.equal(undefined);
      expect(await keys.verify("not-a-key")).to.equal(undefined);
      expect(await keys.revision()).to.equal(revision0, "creating a key changes nothing a running API remembers");

      expect(await keys.setMonthlyQuota(record.id, null)).to.equal(true);
      const revision1 = await keys.revision();
      expect(revision1).to.not.equal(revision0);
      expect(await keys.verify(key)).to.deep.equal({ id: record.id, monthlyQuota: null });

      expect(await keys.revoke(record.id)).to.equal(true);
      expect(await keys.revision()).to.not.equal(revision1);
      expect(await keys.verify(key)).to.equal(undefined);
      expect(await keys.revoke(record.id)).to.equal(false);
      expect(await keys.setMonthlyQuota(record.id, 5)).to.equal(false, "a revoked key's quota is not changed");
      expect(await keys.revoke("no-such-id")).to.equal(false);

      const [listed] = await keys.list();
      expect(listed).to.include({ id: record.id, name: "studio", monthlyQuota: null });
      expect(listed.revokedAt).to.be.a("string");

      await expectRejection(keys.create("   "), "1 to 100 characters");
      await expectRejection(keys.create("x", { monthlyQuota: -1 }), "whole number");
      await expectRejection(keys.create("x", { monthlyQuota: 1.5 }), "whole number");
      expect(await keys.list()).to.have.length(1, "refused keys are not stored");
    } finally {
      await keys.close();
    }
  });

  it("adds usage written by two processes exactly and totals a month without refusals, failures of the service or other months", async function () {
    const location = await newLocation();
    // One after the other: in one thread, a second SQLite connection migrating would wait on the first.
    const a = await ApiKeys.open(location);
    const b = await ApiKeys.open(location);
    try {
      const row = (day: string, statusClass: string, requests: number, keyId = "k1", endpoint = "/api/ccq-evm"): UsageRow => ({
        keyId,
        day,
        endpoint,
        statusClass,
        requests,
      });
      const storeA = new UsageStore(a.db);
      const storeB = new UsageStore(b.db);
      // 20 flushes from each "process" at once, on the same counters.
      await all(
        Array.from(
          { length: 20 },
          (_, index) => () =>
            (index % 2 === 0 ? storeA : storeB).add([
              row("2026-11-03", "2xx", 3),
              row("2026-11-03", "4xx", 1),
              row("2026-11-03", "429", 2),
            ]),
        ),
      );
      await storeB.add([
        row("2026-10-31", "2xx", 1_000),
        row("2026-12-01", "2xx", 500),
        row("2026-11-30", "4xx", 7, "k2"),
        row("2026-11-30", "5xx", 3, "k2"),
      ]);
      const report = await storeA.report({ keyId: "k1", fromDay: "2026-11-01" });
      expect(report.map((entry) => [entry.day, entry.statusClass, entry.requests])).to.deep.equal([
        ["2026-11-03", "2xx", 60],
        ["2026-11-03", "429", 40],
        ["2026-11-03", "4xx", 20],
        ["2026-12-01", "2xx", 500],
      ]);
      const totals = await storeA.monthTotals(["k1", "k2", "k3"], "2026-11");
      expect(Object.fromEntries(totals)).to.deep.equal({ k1: 80, k2: 7 });
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it("forgets a remembered key within the poll interval once another process revokes it or changes its quota", async function () {
    const location = await newLocation();
    const api = await ApiKeys.open(location);
    const cli = await ApiKeys.open(location);
    // The revisions the verifier's polls found, each told once its remembered keys are forgotten.
    const found: string[] = [];
    const polls = new EventEmitter();
    const verifier = await KeyVerifier.create(api, {
      pollMs: 50,
      onRevision: (revision) => {
        found.push(revision);
        polls.emit("revision");
      },
    });
    /** Resolves once a poll of the verifier has found the store's revision of now (the change made by `cli`). */
    const changeSeen = async () => {
      const revision = await cli.revision();
      while (!found.includes(revision)) await once(polls, "revision");
    };
    try {
      const first = await cli.create("first");
      const second = await cli.create("second", { monthlyQuota: 10 });
      expect(verifier.cached(first.key)).to.equal(undefined, "unknown until verified once");
      expect(await verifier.verify(first.key)).to.deep.equal({ id: first.record.id, monthlyQuota: null });
      expect(verifier.cached(first.key)).to.deep.equal({ id: first.record.id, monthlyQuota: null });
      expect(await verifier.verify(second.key)).to.deep.equal({ id: second.record.id, monthlyQuota: 10 });

      await cli.setMonthlyQuota(second.record.id, 20);
      await changeSeen();
      expect(verifier.cached(second.key)).to.equal(undefined);
      expect(await verifier.verify(second.key)).to.deep.equal({ id: second.record.id, monthlyQuota: 20 });

      await cli.revoke(first.record.id);
      await changeSeen();
      expect(verifier.cached(first.key)).to.equal(undefined);
      expect(await verifier.verify(first.key)).to.equal(undefined);
      expect(await verifier.verify(second.key)).to.deep.equal({ id: second.record.id, monthlyQuota: 20 });
    } finally {
      verifier.close();
      await Promise.all([api.close(), cli.close()]);
    }
  });

  it("meters usage of two processes without losing a request and enforces a quota from the shared totals", async function () {
    const location = await newLocation();
    // One after the other: in one thread, a second SQLite connection migrating would wait on the first.
    const a = await ApiKeys.open(location);
    const b = await ApiKeys.open(location);
    const now = () => Date.parse("2026-11-24T12:00:00Z");
    const flushErrors: unknown[] = [];
    const onFlushError = (error: unknown) => flushErrors.push(error);
    const meterA = new UsageMeter(new UsageStore(a.db), { flushMs: 60_000, now, onFlushError });
    const meterB = new UsageMeter(new UsageStore(b.db), { flushMs: 60_000, now, onFlushError });
    try {
      const key = { id: "quota-key", monthlyQuota: 10 };
      for (let i = 0; i < 4; i += 1) meterA.record(key.id, "/api/ccq-evm", 200);
      meterA.record(key.id, "/api/ccq-evm", 429);
      for (let i = 0; i < 5; i += 1) meterB.record(key.id, "/api/ccq-svm", 404);
      meterB.record(key.id, "/api/ccq-svm", 500);
      expect(meterA.remainingQuota(key) <= 0).to.equal(false);
      await all([() => meterA.flush(), () => meterB.flush()]);
      await meterA.flush(); // reads back B's counts too
      expect(meterA.monthlyUsed(key.id)).to.equal(9, "refusals (429) and the service's failures (5xx) do not count against the quota");
      expect(meterA.remainingQuota(key) <= 0).to.equal(false);
      meterA.record(key.id, "/api/ccq-evm", 200);
      expect(meterA.remainingQuota(key)).to.equal(0, "unflushed requests count at once");
      expect(meterB.remainingQuota({ id: "no-quota", monthlyQuota: null })).to.equal(Infinity);

      await all([() => meterA.close(), () => meterB.close()]);
      expect(flushErrors).to.deep.equal([]);
      const rows = await new UsageStore(a.db).report({ keyId: key.id });
      expect(rows.map((row) => [row.endpoint, row.statusClass, row.requests])).to.deep.equal([
        ["/api/ccq-evm", "2xx", 5],
        ["/api/ccq-evm", "429", 1],
        ["/api/ccq-svm", "4xx", 5],
        ["/api/ccq-svm", "5xx", 1],
      ]);
      expect(rows.every((row) => row.day === "2026-11-24")).to.equal(true);
    } finally {
      await all([() => meterA.close(), () => meterB.close()]);
      await Promise.all([a.close(), b.close()]);
    }
  });
}

async function expectRejection(promise: Promise<unknown>, message: string): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error, `expected a rejection with "${message}"`).to.be.instanceOf(Error);
  expect((error as Error).message).to.include(message);
}

describe("Key database", function () {
  this.timeout(60_000);
  let dir: string;
  let files = 0;
  before(async function () {
    dir = await mkdtemp(path.join(tmpdir(), "key-database-"));
  });
  after(async function () {
    await rm(dir, { recursive: true, force: true });
  });

  describe("SQLite", function () {
    keyDatabaseBehaviour(async () => path.join(dir, `keys-${++files}.sqlite`), false);

    it("adopts a first-wave database: its keys keep working and only their hashes are stored", async function () {
      const file = path.join(dir, "first-wave.sqlite");
      // The schema the first wave created by hand, with one key in it.
      const legacy = new DatabaseSync(file);
      legacy.exec(`CREATE TABLE api_keys (id TEXT PRIMARY KEY, name TEXT NOT NULL, key_hash TEXT NOT NULL UNIQUE,
        created_at TEXT NOT NULL, revoked_at TEXT) STRICT; CREATE INDEX api_keys_revoked_at ON api_keys (revoked_at);`);
      const key = `avn_${"A".repeat(43)}`;
      const { createHash } = await import("node:crypto");
      legacy
        .prepare("INSERT INTO api_keys VALUES (?, ?, ?, ?, NULL)")
        .run("old-id", "old", createHash("sha256").update(key).digest("hex"), "2026-01-01T00:00:00.000Z");
      legacy.close();

      const keys = await ApiKeys.open(file);
      try {
        expect(await keys.verify(key)).to.deep.equal({ id: "old-id", monthlyQuota: null });
        const created = await keys.create("new", { monthlyQuota: 3 });
        expect((await keys.list()).map((record) => record.id)).to.deep.equal(["old-id", created.record.id]);
        const bytes = await Promise.all([file, `${file}-wal`].map((name) => readFile(name).catch(() => Buffer.alloc(0))));
        expect(Buffer.concat(bytes).includes(created.key)).to.equal(false);
      } finally {
        await keys.close();
      }
      // Opening again runs nothing twice.
      const again = await ApiKeys.open(file);
      expect(await again.list()).to.have.length(2);
      await again.close();
    });

    it("keeps the counters of a failed flush for the next one", async function () {
      const written: UsageRow[][] = [];
      let failures = 1;
      const sink: UsageSink = {
        async add(rows) {
          if (failures-- > 0) throw new Error("database away");
          written.push([...rows]);
        },
        async monthTotals() {
          return new Map();
        },
      };
      const errors: unknown[] = [];
      const meter = new UsageMeter(sink, { flushMs: 60_000, onFlushError: (error) => errors.push(error) });
      meter.record("k", "/api/ccq-evm", 200);
      await meter.flush();
      expect(errors).to.have.length(1);
      meter.record("k", "/api/ccq-evm", 200);
      expect(meter.monthlyUsed("k")).to.equal(2);
      await meter.close();
      expect(written.flat().map((row) => row.requests)).to.deep.equal([2]);
    });
    it("says a PostgreSQL server cannot be reached, without its password", async function () {
      const error = await ApiKeys.open("postgres://avn:SECRET-PASSWORD@127.0.0.1:1/keys").then(
        () => undefined,
        (failure: unknown) => failure as Error,
      );
      expect(error?.message).to.match(/^the key database could not be opened: .*ECONNREFUSED/);
      expect(error?.message).to.not.include("SECRET");
    });

    it("counts each request under its UTC day, and starts a key's month over when the month changes", async function () {
      const written: UsageRow[] = [];
      const sink: UsageSink = {
        async add(rows) {
          written.push(...rows);
        },
        async monthTotals() {
          return new Map();
        },
      };
      let now = Date.parse("2026-11-30T23:59:59.999Z");
      const meter = new UsageMeter(sink, { flushMs: 60_000, now: () => now });
      const key = { id: "k", monthlyQuota: 2 };
      meter.record(key.id, "/api/ccq-evm", 200);
      meter.record(key.id, "/api/ccq-evm", 200);
      expect(meter.remainingQuota(key)).to.equal(0);
      now += 1; // 2026-12-01T00:00:00Z
      expect(meter.remainingQuota(key), "a new month, a new quota").to.equal(2);
      meter.record(key.id, "/api/ccq-evm", 200);
      now = Date.parse("2026-12-02T12:00:00Z");
      meter.record(key.id, "/api/ccq-evm", 404);
      expect(meter.monthlyUsed(key.id)).to.equal(2);
      await meter.close();
      expect(written.map((row) => [row.day, row.statusClass, row.requests])).to.have.deep.members([
        ["2026-11-30", "2xx", 2],
        ["2026-12-01", "2xx", 1],
        ["2026-12-02", "4xx", 1],
      ]);
    });
  });

  describe("PostgreSQL", function () {
    let server: TestPostgres | undefined;
    before(async function () {
      this.timeout(120_000);
      server = await startPostgres();
      if (server === undefined) requireService(this, POSTGRES);
    });
    after(async function () {
      await server?.stop();
    });
    keyDatabaseBehaviour(async () => server!.createDatabase(), true);

    it("a connection that breaks while in use fails what used it, not the process; the next query opens another", async function () {
      this.timeout(60_000);
      const { db } = await connectDatabase(await server!.createDatabase(), "the test database", () => ({}), { migrate: false });
      try {
        // The connection is held (checked out of the pool) across the restart: unlistened, its 'error' event would
        // be an uncaught exception, which fails this test.
        const broken = await db.connection().execute(async (connection) => {
          await sql`select 1`.execute(connection);
          await server!.restart();
          return sql`select 1`.execute(connection).then(
            () => undefined,
            (error: unknown) => error,
          );
        });
        expect(broken).to.be.instanceOf(Error);
        const { rows } = await sql<{ one: number }>`select 1 as one`.execute(db);
        expect(rows).to.deep.equal([{ one: 1 }]);
      } finally {
        await db.destroy();
      }
    });
  });
});

import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";

import { expect } from "chai";

import { apiWorkerCount, attestationSettings, loadApiConfig, redactedConfig } from "../../../src/api/config.ts";
import { ApiKeys } from "../../../src/api/keys/api-keys.ts";
import { runKeysCli } from "../../../src/api/keys/cli.ts";
import { UsageStore } from "../../../src/api/usage/usage-store.ts";
import { startApi } from "../../../src/api/main.ts";
import { startSourceFixtures, type SourceFixtures } from "../../../src/devnet/source-chains.ts";
import { postOnOwnConnection, spawnApiProcess, workersThatAnswered, type RunningApiProcess } from "../../helpers/api-process.ts";
import { POSTGRES, startPostgres } from "../../helpers/postgres.ts";
import { childrenOf } from "../../../src/chaos/processes.ts";
import { requireService } from "../../helpers/services.ts";

const urls = { EVM_RPC_URLS: "http://127.0.0.1:1", SOLANA_RPC_URLS: "http://127.0.0.1:2" };
const hub = {
  ATTESTATION_L2_RPC_URL: "http://127.0.0.1:3",
  ATTESTATION_L2_WS_URL: "ws://127.0.0.1:3",
  ATTESTATION_NODE_REGISTRY: "0x0000000000000000000000000000000000010001",
  ATTESTATION_VERIFIER: "0x0000000000000000000000000000000000010003",
};

/** A log line of an API process (pino's JSON), or undefined for another line. */
function logEntry(line: string): { msg?: string; pid?: number } | undefined {
  try {
    return JSON.parse(line) as { msg?: string; pid?: number };
  } catch {
    return undefined;
  }
}

describe("API process: keys CLI, configuration, graceful shutdown", function () {
  this.timeout(60_000);
  let dir: string;

  before(async function () {
    dir = await mkdtemp(path.join(tmpdir(), "api-process-"));
  });
  after(async function () {
    await rm(dir, { recursive: true, force: true });
  });

  it("creates a key shown once, stores only its hash, lists, sets quotas, revokes it and reports usage", async function () {
    const database = path.join(dir, "keys.sqlite");
    const out: string[] = [];
    const err: string[] = [];
    const cli = (...args: string[]) =>
      runKeysCli(args, database, {
        print: (line) => out.push(line),
        printError: (line) => err.push(line),
        now: () => new Date("2026-11-24T10:00:00Z"),
      });
    expect(await cli("create", "game studio", "--quota", "1000")).to.equal(0);
    const key = /(avn_[A-Za-z0-9_-]{43})/.exec(out.join("\n"))![1];
    const id = /Created key ([0-9a-f-]{36})/.exec(out.join("\n"))![1];
    expect(out.join("\n")).to.include("1,000/month");
    out.length = 0;
    expect(await cli("list")).to.equal(0);
    expect(out.join("\n")).to.include(id).and.include("live").and.include("1,000/month").and.not.include(key);
    const files = await Promise.all([database, `${database}-wal`].map((file) => readFile(file).catch(() => Buffer.alloc(0))));
    expect(Buffer.concat(files).includes(key)).to.equal(false);

    expect(await cli("quota", id, "none")).to.equal(0);
    expect(out.at(-1)).to.equal(`Key ${id}: no quota`);
    expect(await cli("quota", id, "12x")).to.equal(1);
    expect(err.at(-1)).to.match(/not a quota: 12x/);

    const store = await ApiKeys.open(database);
    expect(await store.verify(key)).to.deep.equal({ id, monthlyQuota: null });
    await new UsageStore(store.db).add([
      { keyId: id, day: "2026-11-02", endpoint: "/api/ccq-evm", statusClass: "2xx", requests: 41 },
      { keyId: id, day: "2026-10-31", endpoint: "/api/ccq-evm", statusClass: "2xx", requests: 1 },
    ]);
    out.length = 0;
    expect(await cli("usage", id)).to.equal(0);
    expect(out.join("\n"))
      .to.include("since 2026-11-01")
      .and.match(/2026-11-02 .*\/api\/ccq-evm .*2xx +41/)
      .and.not.include("2026-10-31");
    expect(out.at(-1)).to.equal("Total: 41 request(s)");
    expect(await cli("usage", "--from", "2026-10-01")).to.equal(0);
    expect(out.at(-1)).to.equal("Total: 42 request(s)");
    expect(await cli("usage", "no-such-key")).to.equal(1);
    expect(await cli("usage", "--from", "last week")).to.equal(1);

    expect(await cli("revoke", id)).to.equal(0);
    expect(await store.verify(key)).to.equal(undefined);
    await store.close();
    expect(await cli("revoke", id)).to.equal(1);
    expect(err.at(-1)).to.equal(`No live key with id ${id}`);
    expect(await cli("create")).to.equal(1);
    expect(await cli("create", "   ")).to.equal(1);
    expect(err.at(-1)).to.equal("error: a key name must have 1 to 100 characters");
    expect(await cli("create", "x", "--color", "red")).to.equal(1);
    expect(err.at(-1)).to.include("Unknown option '--color'");
  });

  it("refuses an invalid configuration naming each problem, and logs URLs by origin only", function () {
    expect(() => loadApiConfig({ EVM_RPC_URLS: "not a url", API_PORT: "-1" })).to.throw(
      /EVM_RPC_URLS\.0: .*\n.*SOLANA_RPC_URLS: .*\n|API_PORT/,
    );
    const config = loadApiConfig({
      EVM_RPC_URLS: "https://eth.example/v2/SECRET-1, https://user:SECRET-2@backup.example/rpc",
      SOLANA_RPC_URLS: "https://sol.example/?api-key=SECRET-3",
      REDIS_URL: "redis://:SECRET-4@redis.example:6379",
    });
    expect(config.EVM_RPC_URLS).to.have.length(2);
    expect(config.API_PORT).to.equal(8787);
    expect(JSON.stringify(redactedConfig(config))).to.not.match(/SECRET/);
    const postgres = loadApiConfig({ ...urls, API_KEYS_DB: "postgres://avn:SECRET-5@db.example:5432/keys" });
    expect(JSON.stringify(redactedConfig(postgres))).to.not.match(/SECRET/);
    expect(JSON.stringify(redactedConfig(postgres))).to.include("db.example:5432");
  });

  it("runs one worker per core by default, with or without the attestation hub (its rounds cross the workers)", function () {
    expect(apiWorkerCount(loadApiConfig(urls), 8)).to.equal(8);
    expect(apiWorkerCount(loadApiConfig({ ...urls, API_WORKERS: "3" }), 8)).to.equal(3);
    expect(apiWorkerCount(loadApiConfig({ ...urls, ...hub }), 8)).to.equal(8);
    expect(apiWorkerCount(loadApiConfig({ ...urls, ...hub, API_WORKERS: "2" }), 8)).to.equal(2);
    expect(attestationSettings(loadApiConfig({ ...urls, ...hub }))).to.include({
      l2RpcUrl: hub.ATTESTATION_L2_RPC_URL,
      l2WsUrl: hub.ATTESTATION_L2_WS_URL,
      hubLabel: "main",
    });
    expect(() => loadApiConfig({ ...urls, API_WORKERS: "0" })).to.throw(/API_WORKERS/);
  });

  describe("graceful shutdown", function () {
    let sources: SourceFixtures;
    before(async function () {
      sources = await startSourceFixtures();
    });
    after(async function () {
      await sources?.stop();
    });

    const spawnApi = (env: Record<string, string>) => spawnApiProcess(sources, env);
    const statusOf = async (port: number, key: string) => (await postOnOwnConnection(sources, port, key)).status;
    const usageOf = async (location: string, keyId: string) => {
      const keys = await ApiKeys.open(location);
      try {
        return Object.fromEntries(
          (await new UsageStore(keys.db).report({ keyId })).map((row) => [`${row.endpoint} ${row.statusClass}`, row.requests]),
        );
      } finally {
        await keys.close();
      }
    };

    /** Two API processes on one key database: keys, revocations and usage as one service. */
    const twoProcessesOnOneDatabase = async (location: string) => {
      const admin = await ApiKeys.open(location);
      const first = await admin.create("first");
      const apis: RunningApiProcess[] = [];
      try {
        apis.push(...(await Promise.all([spawnApi({ API_KEYS_DB: location }), spawnApi({ API_KEYS_DB: location })])));
        // What each key's usage must say: every answer but the 401s (no key, nothing to meter). The
        // revocation loop below may run into the rate limit: its 429s are answers too.
        const answered = new Map<string, Record<string, number>>();
        const send = async (api: RunningApiProcess, key: { key: string; record: { id: string } }) => {
          const status = await statusOf(api.port, key.key);
          if (status !== 401) {
            const counts = answered.get(key.record.id) ?? {};
            const counter = `/api/ccq-evm ${status === 429 ? "429" : `${String(status)[0]}xx`}`;
            counts[counter] = (counts[counter] ?? 0) + 1;
            answered.set(key.record.id, counts);
          }
          return status;
        };
        for (const api of apis) {
          // Twice: the second answer comes from the process's key cache.
          expect(await send(api, first)).to.equal(200);
          expect(await send(api, first)).to.equal(200);
        }
        // A key created while both run works at once in both (unknown keys are never cached).
        const second = await admin.create("second");
        for (const api of apis) expect(await send(api, second)).to.equal(200);

        expect(await runKeysCli(["revoke", first.record.id], location, { print: () => undefined, printError: () => undefined })).to.equal(
          0,
        );
        const revokedAt = Date.now();
        const refusedAfter = await Promise.all(
          apis.map(async (api) => {
            while ((await send(api, first)) !== 401) {
              if (Date.now() - revokedAt > 5_000) throw new Error(`port ${api.port} still accepts the revoked key`);
            }
            return Date.now() - revokedAt;
          }),
        );
        for (const ms of refusedAfter) expect(ms).to.be.below(1_000);
        // The other key is untouched by the revocation.
        for (const api of apis) for (let i = 0; i < 5; i += 1) expect(await send(api, second)).to.equal(200);

        // Stopped gracefully, each process writes what it counted: together exactly what was answered.
        expect(await Promise.all(apis.map((api) => api.stop()))).to.deep.equal([0, 0]);
        expect(await usageOf(location, second.record.id)).to.deep.equal(answered.get(second.record.id));
        expect(answered.get(second.record.id)).to.deep.equal({ "/api/ccq-evm 2xx": 12 });
        expect(await usageOf(location, first.record.id)).to.deep.equal(answered.get(first.record.id));
      } finally {
        await Promise.all(apis.map((api) => api.stop()));
        await admin.close();
      }
    };

    it("two API processes on one SQLite file see a new key at once, a revocation within one second, and count usage exactly", async function () {
      await twoProcessesOnOneDatabase(path.join(dir, "shared-keys.sqlite"));
    });

    it("two API processes on one PostgreSQL server see a new key at once, a revocation within one second, and count usage exactly", async function () {
      this.timeout(120_000);
      const server = await startPostgres();
      if (server === undefined) requireService(this, POSTGRES);
      try {
        await twoProcessesOnOneDatabase(await server.createDatabase());
      } finally {
        await server.stop();
      }
    });

    it("API_WORKERS=2 on PostgreSQL: while it restarts, a key is refused with 503 (never a 500, never unchecked), then answered again", async function () {
      this.timeout(120_000);
      const server = await startPostgres();
      if (server === undefined) requireService(this, POSTGRES);
      let api: RunningApiProcess | undefined;
      try {
        const location = await server.createDatabase();
        const admin = await ApiKeys.open(location);
        const { key } = await admin.create("through a restart");
        await admin.close();
        api = await spawnApi({
          API_KEYS_DB: location,
          API_WORKERS: "2",
          LOG_LEVEL: "info",
          RATE_LIMIT_CAPACITY: "100000",
          RATE_LIMIT_REFILL_PER_SECOND: "100000",
        });
        const running = api;
        for (let i = 0; i < 4; i += 1) expect(await statusOf(running.port, key)).to.equal(200); // both workers, the key remembered
        const whileDown: number[] = [];
        await server.restart(async () => {
          // Within a key poll (250 ms) every worker forgets its remembered keys and asks the database, which is away.
          for (const started = Date.now(); whileDown.filter((status) => status === 503).length < 4;) {
            const response = await postOnOwnConnection(sources, running.port, key);
            whileDown.push(response.status);
            if (response.status === 503) {
              expect(JSON.parse(response.body)).to.deep.equal({
                status: 503,
                message: "Service unavailable: the key database did not answer; retry shortly",
              });
              expect(response.retryAfter).to.equal("1");
            }
            if (Date.now() - started > 10_000) throw new Error(`no 503 while the database was away: ${whileDown.join(", ")}`);
          }
        });
        expect(new Set(whileDown)).to.satisfy((statuses: Set<number>) => [...statuses].every((status) => status === 200 || status === 503));
        const backAt = Date.now();
        while ((await statusOf(running.port, key)) !== 200) {
          if (Date.now() - backAt > 10_000) throw new Error("the key is still refused 10 s after the database came back");
        }
        for (let i = 0; i < 4; i += 1) expect(await statusOf(running.port, key)).to.equal(200);
      } finally {
        await api?.stop();
        await server.stop();
      }
    });

    it("API_WORKERS=2: every worker killed at once, the primary forks new ones and answers again on its port", async function () {
      const location = path.join(dir, "crashes.sqlite");
      const admin = await ApiKeys.open(location);
      const { key } = await admin.create("crashes");
      await admin.close();
      const api = await spawnApi({ API_KEYS_DB: location, API_WORKERS: "2", LOG_LEVEL: "info" });
      try {
        expect(await statusOf(api.port, key)).to.equal(200);
        const workers = await childrenOf(api.pid);
        expect(workers).to.have.length(2);
        const killedAt = api.logs.length;
        for (const worker of workers) process.kill(worker, "SIGKILL");
        // The primary outlives its workers and forks two more (a second after each death): once both log that they
        // listen, the port answers again.
        const replacements = (lines: readonly string[]) => {
          const listening = new Set<number>();
          for (const entry of lines.slice(killedAt).map(logEntry))
            if (entry?.msg?.startsWith("Server listening at") && entry.pid !== undefined && !workers.includes(entry.pid))
              listening.add(entry.pid);
          return listening;
        };
        await api.waitForLogs("two replacement workers listening", (lines) => replacements(lines).size === 2, 15_000);
        expect(api.exited, "the primary exited with its workers").to.equal(false);
        expect([...replacements(api.logs)].sort(), "the primary's workers now").to.deep.equal((await childrenOf(api.pid)).sort());
        expect(await statusOf(api.port, key)).to.equal(200);
      } finally {
        await api.stop();
      }
    });

    it("API_WORKERS=2: both workers answer on one port and share one rate limit, metrics and usage", async function () {
      const location = path.join(dir, "workers.sqlite");
      const admin = await ApiKeys.open(location);
      const { key, record } = await admin.create("workers");
      await admin.close();
      const api = await spawnApi({
        API_KEYS_DB: location,
        API_WORKERS: "2",
        RATE_LIMIT_CAPACITY: "10",
        RATE_LIMIT_REFILL_PER_SECOND: "0.01",
        LOG_LEVEL: "info",
      });
      try {
        // 30 requests at once, each on its own connection: exactly the bucket's 10 pass, whichever worker
        // each one reaches (two buckets of 10 would let up to 20 through).
        const statuses = await Promise.all(Array.from({ length: 30 }, () => statusOf(api.port, key)));
        expect(statuses.filter((status) => status === 200)).to.have.length(10);
        expect(statuses.filter((status) => status === 429)).to.have.length(20);
        // Each connection goes to the next free worker (Node's round robin): both get some, in a share that depends on
        // how fast each takes its connections, so either may have answered only passes or only refusals.
        const servedBy = await workersThatAnswered(api, "/api/ccq-evm", 30);
        expect(servedBy.size, "requests answered by two worker processes").to.equal(2);
        // /metrics sums both workers, whichever answers.
        for (let i = 0; i < 4; i += 1) {
          const metrics = await (await fetch(`http://127.0.0.1:${api.port}/metrics`, { headers: { connection: "close" } })).text();
          expect(metrics).to.match(/api_requests_total\{route="\/api\/ccq-evm",status="200"\} 10\n/);
          expect(metrics).to.match(/api_requests_total\{route="\/api\/ccq-evm",status="429"\} 20\n/);
        }
        expect(await api.stop()).to.equal(0);
        expect(await usageOf(location, record.id)).to.deep.equal({ "/api/ccq-evm 2xx": 10, "/api/ccq-evm 429": 20 });
      } finally {
        await api.stop();
      }
    });

    it("finishes the request in flight, then stops accepting connections", async function () {
      // An upstream that answers after 700 ms (forwarding to anvil), so a request is in flight on close.
      const slow = createServer((request, response) => {
        let body = "";
        request.on("data", (chunk) => (body += chunk));
        const forward = async () => {
          const upstream = await fetch(sources.anvil.rpcUrl, { method: "POST", headers: { "content-type": "application/json" }, body });
          response.writeHead(200, { "content-type": "application/json" }).end(await upstream.text());
        };
        request.on("end", () => setTimeout(() => void forward().catch(() => response.destroy()), 700));
      });
      await new Promise<void>((resolve) => slow.listen(0, "127.0.0.1", resolve));
      const database = path.join(dir, "shutdown.sqlite");
      const store = await ApiKeys.open(database);
      const { key } = await store.create("shutdown");
      await store.close();
      const api = await startApi(
        loadApiConfig({
          API_PORT: "0",
          EVM_RPC_URLS: `http://127.0.0.1:${(slow.address() as AddressInfo).port}`,
          SOLANA_RPC_URLS: sources.solanaRpc.url,
          API_KEYS_DB: database,
          LOG_LEVEL: "silent",
        }),
      );
      try {
        const inFlight = fetch(`${api.url}/api/ccq-evm`, {
          method: "POST",
          headers: { authorization: key, "content-type": "application/json" },
          body: JSON.stringify({ user_address: sources.evm.holder, contract_address: sources.evm.erc20 }),
        });
        await new Promise((resolve) => setTimeout(resolve, 200));
        const closeStarted = Date.now();
        const closed = api.close();
        const response = await inFlight;
        expect(response.status).to.equal(200);
        await closed;
        expect(Date.now() - closeStarted, "closed once the request finished, not after a keep-alive timeout").to.be.lessThan(5_000);
        const after = await fetch(`${api.url}/healthz`).then(
          () => "answered",
          () => "refused",
        );
        expect(after).to.equal("refused");
      } finally {
        slow.closeAllConnections();
        slow.close();
      }
    });
  });
});

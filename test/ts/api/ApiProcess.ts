import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";

import { expect } from "chai";

import { loadApiConfig, redactedConfig } from "../../../src/api/config.js";
import { runKeysCli } from "../../../src/api/keys/cli.js";
import { ApiKeyStore } from "../../../src/api/keys/key-store.js";
import { startApi } from "../../../src/api/main.js";
import { startSourceFixtures, type SourceFixtures } from "../../../src/devnet/source-chains.js";

const projectRoot = path.resolve(import.meta.dirname, "..", "..", "..");

/** A port free right now on the loopback interface. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
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

  it("creates a key shown once, stores only its hash, lists and revokes it", async function () {
    const database = path.join(dir, "keys.sqlite");
    const out: string[] = [];
    const err: string[] = [];
    const cli = (...args: string[]) => runKeysCli(args, database, (line) => out.push(line), (line) => err.push(line));
    expect(cli("create", "game studio")).to.equal(0);
    const key = /(avn_[A-Za-z0-9_-]{43})/.exec(out.join("\n"))![1];
    const id = /Created key ([0-9a-f-]{36})/.exec(out.join("\n"))![1];
    out.length = 0;
    expect(cli("list")).to.equal(0);
    expect(out.join("\n")).to.include(id).and.include("live").and.not.include(key);
    const files = await Promise.all([database, `${database}-wal`].map((file) => readFile(file).catch(() => Buffer.alloc(0))));
    expect(Buffer.concat(files).includes(key)).to.equal(false);

    const store = new ApiKeyStore(database);
    expect(store.verify(key)).to.equal(id);
    expect(cli("revoke", id)).to.equal(0);
    expect(store.verify(key)).to.equal(undefined);
    store.close();
    expect(cli("revoke", id)).to.equal(1);
    expect(err.at(-1)).to.equal(`No live key with id ${id}`);
    expect(cli("create")).to.equal(1);
    expect(cli("create", "   ")).to.equal(1);
    expect(err.at(-1)).to.equal("error: a key name must have 1 to 100 characters");
  });

  it("refuses an invalid configuration naming each problem, and logs URLs by origin only", function () {
    expect(() => loadApiConfig({ EVM_RPC_URLS: "not a url", API_PORT: "-1" })).to.throw(/EVM_RPC_URLS\.0: .*\n.*SOLANA_RPC_URLS: .*\n|API_PORT/);
    const config = loadApiConfig({
      EVM_RPC_URLS: "https://eth.example/v2/SECRET-1, https://user:SECRET-2@backup.example/rpc",
      SOLANA_RPC_URLS: "https://sol.example/?api-key=SECRET-3",
      REDIS_URL: "redis://:SECRET-4@redis.example:6379",
    });
    expect(config.EVM_RPC_URLS).to.have.length(2);
    expect(config.API_PORT).to.equal(8787);
    expect(JSON.stringify(redactedConfig(config))).to.not.match(/SECRET/);
  });

  describe("graceful shutdown", function () {
    let sources: SourceFixtures;
    before(async function () {
      sources = await startSourceFixtures();
    });
    after(async function () {
      await sources?.stop();
    });

    it("sees a new key at once and a revocation within one second in each of two running API processes", async function () {
      const database = path.join(dir, "shared-keys.sqlite");
      const store = new ApiKeyStore(database);
      const first = store.create("first");
      store.close();
      const ports = [await freePort(), await freePort()];
      const children: ChildProcess[] = ports.map((port) =>
        spawn(process.execPath, ["--disable-warning=ExperimentalWarning", "scripts/api.ts"], {
          cwd: projectRoot,
          env: { ...process.env, API_PORT: String(port), EVM_RPC_URLS: sources.anvil.rpcUrl, SOLANA_RPC_URLS: sources.solanaRpc.url, API_KEYS_DB: database, LOG_LEVEL: "silent" },
          stdio: "ignore",
        }),
      );
      const ask = async (port: number, key: string) =>
        (
          await fetch(`http://127.0.0.1:${port}/api/ccq-evm`, {
            method: "POST",
            headers: { authorization: key, "content-type": "application/json" },
            body: JSON.stringify({ user_address: sources.evm.holder, contract_address: sources.evm.erc20 }),
          })
        ).status;
      try {
        for (const port of ports) {
          for (let attempt = 0; ; attempt++) {
            const up = await fetch(`http://127.0.0.1:${port}/healthz`).then((response) => response.ok, () => false);
            if (up) break;
            if (attempt > 300) throw new Error(`the API on port ${port} did not start`);
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
          // Twice: the second answer comes from the process's key cache.
          expect(await ask(port, first.key)).to.equal(200);
          expect(await ask(port, first.key)).to.equal(200);
        }
        // A key created while both run works at once in both (unknown keys are never cached).
        const creator = new ApiKeyStore(database);
        const second = creator.create("second");
        creator.close();
        for (const port of ports) expect(await ask(port, second.key)).to.equal(200);

        const out: string[] = [];
        expect(runKeysCli(["revoke", first.record.id], database, (line) => out.push(line), () => undefined)).to.equal(0);
        const revokedAt = Date.now();
        const refusedAfter = await Promise.all(
          ports.map(async (port) => {
            while ((await ask(port, first.key)) !== 401) {
              if (Date.now() - revokedAt > 5_000) throw new Error(`port ${port} still accepts the revoked key`);
            }
            return Date.now() - revokedAt;
          }),
        );
        for (const ms of refusedAfter) expect(ms).to.be.below(1_000);
        // The other key is untouched by the revocation.
        for (const port of ports) expect(await ask(port, second.key)).to.equal(200);
      } finally {
        for (const child of children) child.kill("SIGTERM");
        await Promise.all(children.map((child) => (child.exitCode !== null ? undefined : new Promise((resolve) => child.once("exit", resolve)))));
      }
    });

    it("finishes the request in flight, then stops accepting connections", async function () {
      // An upstream that answers after 700 ms (forwarding to anvil), so a request is in flight on close.
      const slow = createServer((request, response) => {
        let body = "";
        request.on("data", (chunk) => (body += chunk));
        request.on("end", () =>
          setTimeout(async () => {
            const upstream = await fetch(sources.anvil.rpcUrl, { method: "POST", headers: { "content-type": "application/json" }, body });
            response.writeHead(200, { "content-type": "application/json" }).end(await upstream.text());
          }, 700),
        );
      });
      await new Promise<void>((resolve) => slow.listen(0, "127.0.0.1", resolve));
      const database = path.join(dir, "shutdown.sqlite");
      const store = new ApiKeyStore(database);
      const { key } = store.create("shutdown");
      store.close();
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

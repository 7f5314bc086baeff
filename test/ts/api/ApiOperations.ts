import { Writable } from "node:stream";

import { expect } from "chai";

import { startTestApi, type TestApi } from "../../helpers/api.ts";
import { startSourceFixtures, type SourceFixtures } from "../../../src/devnet/source-chains.ts";

const DEAD_UPSTREAM = "http://127.0.0.1:9/v3/SECRET-RPC-KEY";

describe("API operations: upstream faults, rate limits, health, metrics, logs", function () {
  this.timeout(60_000);
  let sources: SourceFixtures;

  before(async function () {
    sources = await startSourceFixtures();
  });
  after(async function () {
    await sources?.stop();
  });

  const query = (api: TestApi, path = "/api/ccq-evm", body?: object) =>
    fetch(`${api.baseUrl}${path}`, {
      method: "POST",
      headers: { authorization: api.apiKey, "content-type": "application/json" },
      body: JSON.stringify(body ?? { user_address: sources.evm.holder, contract_address: sources.evm.erc20 }),
    });

  it("answers 500 within the timeout when every upstream is down, and leaks no key, URL or stack trace to client or log", async function () {
    const lines: string[] = [];
    const logStream = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const api = await startTestApi(sources, {
      evmUrls: [DEAD_UPSTREAM],
      solanaUrls: [DEAD_UPSTREAM],
      timeoutMs: 300,
      logger: { level: "trace", stream: logStream },
    });
    try {
      for (const [path, body] of [
        ["/api/ccq-evm", undefined],
        ["/api/ccq-svm", { owner_address: sources.svm.owner, token_mint_address: sources.svm.splMint }],
      ] as const) {
        const started = Date.now();
        const response = await query(api, path, body);
        expect(Date.now() - started).to.be.lessThan(3_000);
        expect(response.status).to.equal(500);
        const text = await response.text();
        expect(JSON.parse(text)).to.deep.equal({ status: 500, message: "Internal error: the balance could not be fetched" });
      }
      const everything = lines.join("");
      expect(everything).to.include("request failed"); // the failure is logged…
      for (const secret of ["SECRET-RPC-KEY", "127.0.0.1:9", api.apiKey, "    at "]) expect(everything).to.not.include(secret); // …without secrets
    } finally {
      await api.close();
    }
  });

  it("fails over to the next upstream when the first is down", async function () {
    const api = await startTestApi(sources, {
      evmUrls: [DEAD_UPSTREAM, sources.anvil.rpcUrl],
      solanaUrls: [DEAD_UPSTREAM, sources.solanaRpc.url],
    });
    try {
      expect((await query(api)).status).to.equal(200);
      expect(
        (await query(api, "/api/ccq-svm", { owner_address: sources.svm.owner, token_mint_address: sources.svm.splMint })).status,
      ).to.equal(200);
    } finally {
      await api.close();
    }
  });

  it("answers 429 with Retry-After and RateLimit headers once a key's bucket is empty", async function () {
    const api = await startTestApi(sources, { policy: { capacity: 2, refillPerSecond: 0.1 } });
    try {
      const first = await query(api);
      expect(first.headers.get("ratelimit-limit")).to.equal("2");
      expect(first.headers.get("ratelimit-remaining")).to.equal("1");
      expect((await query(api)).status).to.equal(200);
      const limited = await query(api);
      expect(limited.status).to.equal(429);
      expect(await limited.json()).to.deep.equal({ status: 429, message: "Rate limit exceeded" });
      expect(Number(limited.headers.get("retry-after"))).to.be.within(1, 10);
      expect(limited.headers.get("ratelimit-remaining")).to.equal("0");
      expect(limited.headers.get("ratelimit-policy")).to.equal("2;w=20");
    } finally {
      await api.close();
    }
  });

  it("serves /healthz, /readyz by upstream, and Prometheus metrics by route, status, upstream and cache", async function () {
    let upstreamsUp = true;
    const api = await startTestApi(sources, { checkUpstreams: async () => ({ evm: upstreamsUp, svm: true }) });
    try {
      expect((await fetch(`${api.baseUrl}/healthz`)).status).to.equal(200);
      expect((await fetch(`${api.baseUrl}/readyz`)).status).to.equal(200);
      upstreamsUp = false;
      const notReady = await fetch(`${api.baseUrl}/readyz`);
      expect(notReady.status).to.equal(503);
      expect(await notReady.json()).to.deep.equal({ status: "not ready", upstreams: { evm: false, svm: true } });
      await query(api);
      await query(api); // the second is a cache hit at the same block
      const metrics = await (await fetch(`${api.baseUrl}/metrics`)).text();
      expect(metrics).to.match(/api_requests_total\{route="\/api\/ccq-evm",status="200"\} 2/);
      expect(metrics).to.match(/api_cache_lookups_total\{chain="evm",result="hit"\} 1/);
      expect(metrics).to.match(/api_upstream_requests_total\{chain="evm",outcome="ok"\} \d+/);
      expect(metrics).to.include("api_request_duration_seconds_bucket");
    } finally {
      await api.close();
    }
  });
});

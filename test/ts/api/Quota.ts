import { expect } from "chai";

import { UsageMeter } from "../../../src/api/usage/usage-meter.ts";
import { UsageStore } from "../../../src/api/usage/usage-store.ts";
import { startSourceFixtures, type SourceFixtures } from "../../../src/devnet/source-chains.ts";
import { startTestApi, type TestApi } from "../../helpers/api.ts";
import { eventually } from "../../helpers/devnet.ts";

/** Seconds from `now` to the first instant of the next calendar month (UTC). */
function secondsToNextMonth(now: number): number {
  const date = new Date(now);
  return Math.ceil((Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1) - now) / 1000);
}

describe("API: monthly quotas per key, on a real server with a real key database", function () {
  this.timeout(60_000);
  let sources: SourceFixtures;
  let api: TestApi;

  before(async function () {
    sources = await startSourceFixtures();
    api = await startTestApi(sources, { meterUsage: true, policy: { capacity: 20, refillPerSecond: 0.001 } });
  });

  after(async function () {
    await api?.close();
    await sources?.stop();
  });

  const post = (path: string, body: unknown, key: string) =>
    fetch(`${api.baseUrl}${path}`, {
      method: "POST",
      headers: { authorization: key, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const evmItem = () => ({ user_address: sources.evm.holder, contract_address: sources.evm.erc20 });

  it("answers 429 'Monthly quota exceeded' once a key's answered requests reach its quota, until the quota is raised", async function () {
    const { record, key } = await api.keys.create("quota of 3", { monthlyQuota: 3 });
    expect((await post("/api/ccq-evm", evmItem(), key)).status).to.equal(200);
    expect((await post("/api/ccq-evm", { user_address: "0x12" }, key)).status, "a bad request is answered, so it counts").to.equal(400);
    expect(
      (await post("/api/ccq-svm", { owner_address: sources.svm.owner, token_mint_address: sources.svm.splMint }, key)).status,
    ).to.equal(200);

    const before = Date.now();
    const over = await post("/api/ccq-evm", evmItem(), key);
    expect(over.status).to.equal(429);
    expect(await over.json()).to.deep.equal({ status: 429, message: "Monthly quota exceeded" });
    const retryAfter = Number(over.headers.get("retry-after"));
    expect(retryAfter).to.be.within(secondsToNextMonth(Date.now()), secondsToNextMonth(before));
    expect(over.headers.get("ratelimit-remaining"), "the refusal took no rate-limit token").to.equal(null);
    expect((await post("/api/ccq-evm/batch", [evmItem()], key)).status, "a batch of the key is refused whole").to.equal(429);

    // Refusals do not count against the quota: one more allowed request is exactly one more answer.
    expect(await api.keys.setMonthlyQuota(record.id, 4)).to.equal(true);
    await eventually(
      async () => (await post("/api/ccq-evm", evmItem(), key)).status,
      (status) => status === 200,
      3_000,
    );
    const again = await post("/api/ccq-evm", evmItem(), key);
    expect(await again.json()).to.deep.equal({ status: 429, message: "Monthly quota exceeded" });

    expect(await api.keys.setMonthlyQuota(record.id, null)).to.equal(true);
    await eventually(
      async () => (await post("/api/ccq-evm", evmItem(), key)).status,
      (status) => status === 200,
      3_000,
    );

    await api.meter!.flush();
    const rows = await new UsageStore(api.keys.db).report({ keyId: record.id });
    const total = (statusClass: string) =>
      rows.filter((row) => row.statusClass === statusClass).reduce((sum, row) => sum + row.requests, 0);
    expect(total("2xx")).to.equal(4); // the last 200 came after the quota was removed
    expect(total("4xx")).to.equal(1);
    expect(total("429")).to.be.at.least(3);
  });

  it("refuses a batch beyond the quota whole; with ?partial=true answers the items within it and gives the others the quota's 429 entry", async function () {
    const { key } = await api.keys.create("quota of 4", { monthlyQuota: 4 });
    expect((await post("/api/ccq-evm", evmItem(), key)).status).to.equal(200);
    const items = [evmItem(), { user_address: "0x12" }, evmItem(), evmItem(), evmItem()];
    // By default a batch is answered whole or refused whole: 5 items with 3 left this month.
    const whole = await post("/api/ccq-evm/batch", items, key);
    expect(whole.status).to.equal(429);
    expect(await whole.json()).to.deep.equal({
      status: 429,
      message: "Monthly quota exceeded: a batch of 5 items and 3 left this month; send at most 3 items, or add ?partial=true",
    });
    expect(Number(whole.headers.get("retry-after"))).to.be.within(1, 31 * 24 * 3_600); // the next month
    const response = await post("/api/ccq-evm/batch?partial=true", items, key);
    expect(response.status).to.equal(200);
    const { results } = ((await response.json()) as { data: { results: Array<{ status: number; message: string }> } }).data;
    expect(results.map((entry) => entry.status)).to.deep.equal([200, 400, 200, 429, 429]);
    expect(results[3]).to.deep.equal({ status: 429, message: "Monthly quota exceeded" });
    expect(results[4]).to.deep.equal({ status: 429, message: "Monthly quota exceeded" });
    // 20 tokens: 1 for the single request, 1 for the refused batch's arrival, 3 for the items within the quota.
    expect(response.headers.get("ratelimit-remaining")).to.equal("15");

    const over = await post("/api/ccq-evm", evmItem(), key);
    expect(await over.json()).to.deep.equal({ status: 429, message: "Monthly quota exceeded" });
  });

  it("counts the month's usage already in the database from a key's first request on", async function () {
    // Answered by earlier processes this month, before this server saw the keys.
    const used = await api.keys.create("3 used of 3", { monthlyQuota: 3 });
    const twoLeft = await api.keys.create("3 used of 5", { monthlyQuota: 5 });
    const day = new Date().toISOString().slice(0, 10);
    await new UsageStore(api.keys.db).add(
      [used, twoLeft].flatMap(({ record }) => [
        { keyId: record.id, day, endpoint: "/api/ccq-evm", statusClass: "2xx", requests: 2 },
        { keyId: record.id, day, endpoint: "/api/ccq-svm", statusClass: "4xx", requests: 1 },
        { keyId: record.id, day, endpoint: "/api/ccq-evm", statusClass: "429", requests: 9 },
      ]),
    );
    const refused = await post("/api/ccq-evm", evmItem(), used.key);
    expect(refused.status, "the first request of a key over its quota").to.equal(429);
    expect(await refused.json()).to.deep.equal({ status: 429, message: "Monthly quota exceeded" });

    const statuses: number[] = [];
    for (let i = 0; i < 3; i += 1) statuses.push((await post("/api/ccq-evm", evmItem(), twoLeft.key)).status);
    expect(statuses, "2 left from the key's first request on").to.deep.equal([200, 200, 429]);
  });

  it("answers 503, never 200, while a key's month total cannot be read on its first sight, and reads it again on the next request", async function () {
    let store: UsageStore | undefined;
    let databaseAway = true;
    const meter = new UsageMeter(
      {
        add: (rows) => store!.add(rows),
        monthTotals: async (keyIds, month) => {
          if (databaseAway) throw new Error("database away");
          return store!.monthTotals(keyIds, month);
        },
      },
      { flushMs: 3_600_000 },
    );
    const away = await startTestApi(sources, { usage: meter, logger: false });
    try {
      store = new UsageStore(away.keys.db);
      const { record, key } = await away.keys.create("over quota", { monthlyQuota: 2 });
      await store.add([
        { keyId: record.id, day: new Date().toISOString().slice(0, 10), endpoint: "/api/ccq-evm", statusClass: "2xx", requests: 2 },
      ]);
      const send = () =>
        fetch(`${away.baseUrl}/api/ccq-evm`, {
          method: "POST",
          headers: { authorization: key, "content-type": "application/json" },
          body: JSON.stringify(evmItem()),
        });
      const refused = await Promise.all([send(), send(), send()]);
      expect(refused.map((response) => response.status)).to.deep.equal([503, 503, 503]);
      expect(await refused[0].json()).to.deep.equal({
        status: 503,
        message: "Service unavailable: the key database did not answer; retry shortly",
      });
      expect((await send()).status, "still unknown, still refused").to.equal(503);
      databaseAway = false;
      const over = await send();
      expect(over.status).to.equal(429);
      expect(await over.json()).to.deep.equal({ status: 429, message: "Monthly quota exceeded" });
      expect((await send()).status).to.equal(429);
      await meter.flush();
    } finally {
      await away.close();
      await meter.close();
    }
  });

  it("refuses at once a key whose quota is 0, and leaves other keys alone", async function () {
    const { key } = await api.keys.create("no requests", { monthlyQuota: 0 });
    const refused = await post("/api/ccq-evm", evmItem(), key);
    expect(refused.status).to.equal(429);
    expect(await refused.json()).to.deep.equal({ status: 429, message: "Monthly quota exceeded" });
    expect((await post("/api/ccq-evm", evmItem(), api.apiKey)).status).to.equal(200);
  });
});

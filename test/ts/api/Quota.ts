import { expect } from "chai";

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

  it("answers a batch's items beyond the quota with the quota's 429 entry, and takes rate-limit tokens only for the others", async function () {
    const { key } = await api.keys.create("quota of 4", { monthlyQuota: 4 });
    expect((await post("/api/ccq-evm", evmItem(), key)).status).to.equal(200);
    const response = await post("/api/ccq-evm/batch", [evmItem(), { user_address: "0x12" }, evmItem(), evmItem(), evmItem()], key);
    expect(response.status).to.equal(200);
    const { results } = ((await response.json()) as { data: { results: Array<{ status: number; message: string }> } }).data;
    expect(results.map((entry) => entry.status)).to.deep.equal([200, 400, 200, 429, 429]);
    expect(results[3]).to.deep.equal({ status: 429, message: "Monthly quota exceeded" });
    expect(results[4]).to.deep.equal({ status: 429, message: "Monthly quota exceeded" });
    // 20 tokens: 1 for the single request, 3 for the batch's items within the quota.
    expect(response.headers.get("ratelimit-remaining")).to.equal("16");

    const over = await post("/api/ccq-evm", evmItem(), key);
    expect(await over.json()).to.deep.equal({ status: 429, message: "Monthly quota exceeded" });
  });

  it("refuses at once a key whose quota is 0, and leaves other keys alone", async function () {
    const { key } = await api.keys.create("no requests", { monthlyQuota: 0 });
    const refused = await post("/api/ccq-evm", evmItem(), key);
    expect(refused.status).to.equal(429);
    expect(await refused.json()).to.deep.equal({ status: 429, message: "Monthly quota exceeded" });
    expect((await post("/api/ccq-evm", evmItem(), api.apiKey)).status).to.equal(200);
  });
});

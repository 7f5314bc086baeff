import { expect } from "chai";

import { loadApiConfig } from "../../../src/api/config.ts";
import { DEFAULT_ATTEST_COST } from "../../../src/api/server/dependencies.ts";
import { UsageStore } from "../../../src/api/usage/usage-store.ts";
import { startSourceFixtures, type SourceFixtures } from "../../../src/devnet/source-chains.ts";
import { connectNode, honestSigner, startAttestationL2, startHubApi, until, type AttestationL2 } from "./fixture.ts";

const ATTEST_COST = 5;
/** Seven tokens, refilled so slowly that none comes back during the test. */
const POLICY = { capacity: 7, refillPerSecond: 0.001 };

/** `?attest=true` asks every connected node: it costs ATTEST_COST tokens and is metered as its own endpoint. */
describe("attested answers cost ATTEST_COST rate-limit tokens and are metered apart", function () {
  this.timeout(120_000);
  let sources: SourceFixtures;
  let l2: AttestationL2;
  let hubApi: Awaited<ReturnType<typeof startHubApi>>;
  const disconnects: Array<() => Promise<void>> = [];

  before(async function () {
    sources = await startSourceFixtures();
    l2 = await startAttestationL2();
    hubApi = await startHubApi(sources, l2, l2.verifier, { api: { policy: POLICY, attestCost: ATTEST_COST, meterUsage: true } });
    // Two licensed nodes: the quorum, so an attested request that is let through is answered 200.
    for (const node of l2.nodes.slice(0, 2)) disconnects.push(connectNode(hubApi.hubUrl, node, honestSigner(sources, node, l2.verifier)));
    await until("both nodes admitted", async () => {
      const { nodes } = (await (await fetch(`${hubApi.api.baseUrl}/attest/nodes`)).json()) as { nodes: Array<{ connected: boolean }> };
      return nodes.filter((node) => node.connected).length === 2;
    });
  });
  after(async function () {
    for (const disconnect of disconnects) await disconnect();
    await hubApi?.api.close();
    await l2?.stop();
    await sources?.stop();
  });

  const post = (suffix: string) =>
    fetch(`${hubApi.api.baseUrl}/api/ccq-evm${suffix}`, {
      method: "POST",
      headers: { authorization: hubApi.api.apiKey, "content-type": "application/json" },
      body: JSON.stringify({ user_address: sources.evm.holder, contract_address: sources.evm.erc20 }),
    });

  it("takes ATTEST_COST tokens at once or none: 429 for the attested request only, plain ones go on; usage has both endpoints", async function () {
    const attested = await post("?attest=true");
    expect(attested.status).to.equal(200);
    expect(((await attested.json()) as { data: { attestation?: unknown } }).data.attestation).to.not.equal(undefined);
    expect(attested.headers.get("ratelimit-remaining")).to.equal("2"); // 7 − 5

    // Two tokens left: too few for an attested answer, which takes none of them…
    const refused = await post("?attest=true");
    expect(refused.status).to.equal(429);
    expect(Number(refused.headers.get("retry-after"))).to.be.greaterThan(0);
    // …so two plain answers still go through, and the third finds the bucket empty.
    expect((await post("")).status).to.equal(200);
    expect((await post("?attest=false")).status).to.equal(200);
    expect((await post("")).status).to.equal(429);

    await hubApi.api.meter!.flush();
    const rows = await new UsageStore(hubApi.api.keys.db).report();
    const counts = Object.fromEntries(rows.map((row) => [`${row.endpoint} ${row.statusClass}`, row.requests]));
    expect(counts).to.deep.equal({
      "/api/ccq-evm 2xx": 2,
      "/api/ccq-evm 429": 1,
      "/api/ccq-evm?attest=true 2xx": 1,
      "/api/ccq-evm?attest=true 429": 1,
    });
  });

  it("ATTEST_COST: 5 unless set; never more than a bucket holds", function () {
    const base = { EVM_RPC_URLS: "http://127.0.0.1:1", SOLANA_RPC_URLS: "http://127.0.0.1:2" };
    expect(loadApiConfig(base).ATTEST_COST).to.equal(DEFAULT_ATTEST_COST).and.equal(5);
    expect(loadApiConfig({ ...base, ATTEST_COST: "100" }).ATTEST_COST).to.equal(100); // the default capacity
    expect(() => loadApiConfig({ ...base, ATTEST_COST: "101" })).to.throw(/ATTEST_COST.*at most RATE_LIMIT_CAPACITY \(100\)/);
    expect(() => loadApiConfig({ ...base, ATTEST_COST: "0" })).to.throw(/ATTEST_COST/);
  });
});

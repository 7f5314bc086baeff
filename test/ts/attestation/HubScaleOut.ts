import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

import { expect } from "chai";
import { pino } from "pino";
import { createClient } from "redis";

import { PRESENCE_TTL_MS } from "../../../src/api/attestation-hub/bus/redis-bus.ts";
import { ApiKeys } from "../../../src/api/keys/api-keys.ts";
import { DEFAULT_HUB_LABEL, HUB_PATH, hubName, type RoundDone } from "../../../src/common/hub-protocol.ts";
import { startSourceFixtures, type SourceFixtures } from "../../../src/devnet/source-chains.ts";
import { connectToHub } from "../../../src/node/hub-client.ts";
import { spawnApiProcess, type RunningApiProcess } from "../../helpers/api-process.ts";
import { REDIS, startRedis } from "../../helpers/redis.ts";
import { requireService } from "../../helpers/services.ts";
import {
  honestSigner,
  L2_CHAIN_ID,
  startAttestationL2,
  until,
  type AttestationL2,
  type LicensedNode,
  hubProcessProbes,
  type NodesAnswer,
} from "./fixture.ts";

/**
 * The hub across processes (issue 31): API processes joined through Redis, or a cluster's workers through
 * their primary, each node connected to one of them, every process answering `?attest=true` with a quorum
 * of nodes connected anywhere. Real API processes (`scripts/api.ts`), a real Redis, a real L2 and the
 * nodes' real client and signer.
 */
describe("attestation hub scale-out: rounds across API processes (issue 31)", function () {
  this.timeout(120_000);
  let dir: string;
  let sources: SourceFixtures;
  let l2: AttestationL2;
  let apiKey: string;
  let keysDb: string;
  const cleanups: Array<() => Promise<unknown>> = [];

  before(async function () {
    dir = await mkdtemp(path.join(tmpdir(), "hub-scale-out-"));
    sources = await startSourceFixtures();
    l2 = await startAttestationL2();
    keysDb = path.join(dir, "keys.sqlite");
    const keys = await ApiKeys.open(keysDb);
    apiKey = (await keys.create("scale-out")).key;
    await keys.close();
  });
  afterEach(async function () {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  after(async function () {
    await l2?.stop();
    await sources?.stop();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  const hubEnv = (extra: Record<string, string>) => ({
    API_KEYS_DB: keysDb,
    ATTESTATION_L2_RPC_URL: l2.anvil.rpcUrl,
    ATTESTATION_L2_WS_URL: l2.anvil.wsUrl,
    ATTESTATION_NODE_REGISTRY: l2.nodeRegistry,
    ATTESTATION_VERIFIER: l2.verifier,
    ATTESTATION_EVM_CONFIRMATIONS: "0",
    RATE_LIMIT_CAPACITY: "10000",
    RATE_LIMIT_REFILL_PER_SECOND: "10000",
    ...extra,
  });
  const start = async (env: Record<string, string>) => {
    const api = await spawnApiProcess(sources, hubEnv(env));
    cleanups.push(() => api.stop());
    return api;
  };
  const wsUrl = (api: RunningApiProcess) => `ws://127.0.0.1:${api.port}${HUB_PATH}`;
  /** The round results each node received, by burner. */
  const results = new Map<string, RoundDone[]>();
  const resultsOf = (node: LicensedNode) => results.get(node.burner.address) ?? [];
  /** A node's real hub client and signer in this process, trying `urls` in turn. */
  const connect = (node: LicensedNode, urls: string[]) => {
    results.set(node.burner.address, []);
    const stop = connectToHub({
      urls,
      hubName: hubName(DEFAULT_HUB_LABEL, L2_CHAIN_ID, l2.verifier),
      chainId: L2_CHAIN_ID,
      wallet: node.burner,
      signer: honestSigner(sources, node, l2.verifier),
      licenses: () => [node.licenseId],
      onRoundDone: (done) => results.get(node.burner.address)!.push(done),
      logger: pino({ level: "silent" }),
      firstRetryMs: 100,
      maxRetryMs: 200,
    });
    cleanups.push(stop);
  };
  const { nodesOf, connectedOf, expectAttested } = hubProcessProbes(() => ({ sources, apiKey, l2 }));

  it("3 API processes on one Redis, one node on each: every process answers with a quorum; a killed process's node moves on", async function () {
    const redis = await startRedis();
    if (redis === undefined) requireService(this, REDIS);
    cleanups.push(() => redis.stop());
    // Every instance seals its messages on Redis with the one secret they share (issue 46).
    const busSecret = randomBytes(32).toString("hex");
    const apis = await Promise.all([0, 1, 2].map(() => start({ REDIS_URL: redis.url, HUB_BUS_SECRET: busSecret })));
    const nodes = l2.nodes.slice(0, 3);
    // Node i dials process i first, then the next ones: each process holds exactly one node.
    for (const [index, node] of nodes.entries())
      connect(
        node,
        [0, 1, 2].map((offset) => wsUrl(apis[(index + offset) % 3])),
      );
    const burners = nodes.map((node) => node.burner.address).sort();
    for (const api of apis)
      await until(`all nodes seen from port ${api.port}`, async () => (await connectedOf(api))?.join() === burners.join());

    // Quorum is 2 and each process holds one node: every answer carries a signature from another process's node.
    for (const api of apis) {
      const { signatures } = await expectAttested(api);
      expect(signatures.length).to.be.at.least(2);
    }
    // The statistics are one table, whichever process serves them: 3 rounds, each asking every node. Read once
    // every answer is counted (a round goes on after its quorum, so a late one lands after the 200).
    const settled = (rows: NodesAnswer["nodes"]) =>
      rows.every((row) => row.asked === 3 && Object.values(row.answers).reduce((a, b) => a + b, 0) === 3);
    await until("every round counted", async () => settled(await nodesOf(apis[0])));
    const views = await Promise.all(
      apis.map(async (api) => (await nodesOf(api)).map(({ burner, asked, answers }) => ({ burner, asked, answers }))),
    );
    expect(views[1]).to.deep.equal(views[0]);
    expect(views[2]).to.deep.equal(views[0]);
    // Each round's result reaches every signer, two of three through Redis from the process that opened it,
    // and lists all three signatures (every node signed the same balance).
    await until("every node's three round results", () => nodes.every((node) => resultsOf(node).length === 3));
    for (const node of nodes) expect(resultsOf(node).map((done) => done.signatures.length)).to.deep.equal([3, 3, 3]);
    expect(new Set(nodes.flatMap((node) => resultsOf(node).map((done) => done.id))).size).to.equal(3);

    // A crash: process 0 is killed. Its node dials the next URL and is admitted by process 1; answers go on.
    await apis[0].kill();
    await until("node 0 admitted again elsewhere", async () => (await connectedOf(apis[1]))?.join() === burners.join());
    for (const api of apis.slice(1)) for (let i = 0; i < 2; i += 1) await expectAttested(api);

    // Presence is namespaced by the hub's name and expires: the killed process's lapses on its own; a
    // process stopped in order withdraws its own at once.
    const client = createClient({ url: redis.url });
    await client.connect();
    cleanups.push(() => client.quit());
    const presenceKeys = async () => (await client.keys("*presence:*")).sort();
    const before = await presenceKeys();
    const prefix = `avn-hub:{${hubName(DEFAULT_HUB_LABEL, L2_CHAIN_ID, l2.verifier)}}:presence:`;
    expect(before.every((key) => key.startsWith(prefix))).to.equal(true);
    for (const key of before) expect(await client.pTTL(key)).to.be.within(1, PRESENCE_TTL_MS);
    expect(await apis[2].stop()).to.equal(0);
    const after = await presenceKeys();
    expect(after.length).to.be.below(before.length);
    expect(after.every((key) => before.includes(key))).to.equal(true);
    await until("node 2 admitted by the last process", async () => (await connectedOf(apis[1]))?.join() === burners.join());
    await expectAttested(apis[1]);
  });

  it("API_WORKERS=2 without Redis: rounds go through the primary, both workers answer with their nodes' quorum", async function () {
    const api = await start({ API_WORKERS: "2", LOG_LEVEL: "info" });
    const nodes = l2.nodes.slice(0, 2);
    for (const node of nodes) connect(node, [wsUrl(api)]);
    const burners = nodes.map((node) => node.burner.address).sort();
    await until("both nodes seen", async () => (await connectedOf(api))?.join() === burners.join());
    // Each request on a connection of its own goes to the next worker. With quorum 2 and two nodes, each
    // answer needs both, and a worker holds at most one of them or none: every answer crossed workers.
    for (let i = 0; i < 4; i += 1) {
      const { signatures } = await expectAttested(api);
      expect(signatures.map((signature) => signature.signer).sort()).to.deep.equal(burners);
    }
    const answeredBy = new Set(
      api.logs
        .map((line) => JSON.parse(line) as { pid?: number; msg?: string; req?: { url?: string } })
        .filter((line) => line.msg === "incoming request" && line.req?.url === "/api/ccq-evm?attest=true")
        .map((line) => line.pid),
    );
    expect(answeredBy.size, "attested requests served by two worker processes").to.equal(2);
    await until("the statistics of both workers' rounds, from the primary", async () =>
      (await nodesOf(api)).every((node) => node.connected && node.asked === 4 && node.answers.agreed + node.answers.late === 4),
    );
    // Each round's result reaches both signers, the one on the other worker through the primary.
    await until("both nodes' four round results", () => nodes.every((node) => resultsOf(node).length === 4));
    for (const node of nodes) expect(resultsOf(node).every((done) => done.signatures.length === 2)).to.equal(true);
  });
});

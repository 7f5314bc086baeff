import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

import { expect } from "chai";
import { pino } from "pino";
import { createClient } from "redis";

import {
  MAX_ROUND_DEADLINE_MS,
  parsePresence,
  type RelayedAnswer,
  type RelayedDone,
  type RelayedRound,
} from "../../../src/api/attestation-hub/bus/bus.ts";
import {
  BusEnvelopes,
  MAX_CLOCK_SKEW_MS,
  PRESENCE_TTL_MS,
  RedisHubBus,
  type BusMessageKind,
  type BusRefusal,
} from "../../../src/api/attestation-hub/bus/redis-bus.ts";
import { ApiKeys } from "../../../src/api/keys/api-keys.ts";
import { ApiMetrics } from "../../../src/api/metrics.ts";
import { DEFAULT_HUB_LABEL, HUB_PATH, hubName } from "../../../src/common/hub-protocol.ts";
import { startSourceFixtures, type SourceFixtures } from "../../../src/devnet/source-chains.ts";
import type { RedisServer } from "../../../src/devnet/redis-server.ts";
import { connectToHub } from "../../../src/node/hub-client.ts";
import { spawnApiProcess, type RunningApiProcess } from "../../helpers/api-process.ts";
import { REDIS, startRedis } from "../../helpers/redis.ts";
import { requireService } from "../../helpers/services.ts";
import { honestSigner, L2_CHAIN_ID, startAttestationL2, until, type AttestationL2, hubProcessProbes, type NodesAnswer } from "./fixture.ts";

type RedisClient = ReturnType<typeof createClient>;
/** A round as it travels on the bus, as much of it as an attacker reading the channel needs. */
type SeenRound = { origin: string; burners: string[]; request: { id: string } };

/**
 * Issue 46, finding 2: the Redis bus joining a hub's instances is authenticated with a shared secret
 * (`HUB_BUS_SECRET`). Three real API processes on one real Redis, a real L2 and one real node on each;
 * an attacker is a plain Redis client without the secret that reads and writes the hub's keys and channels.
 * Whatever it publishes or writes changes no round, and each of its messages is counted in
 * `api_attestation_bus_messages_refused_total`.
 */
describe("attestation hub bus: a Redis writer without HUB_BUS_SECRET changes nothing (issue 46)", function () {
  this.timeout(180_000);
  let dir: string;
  let sources: SourceFixtures;
  let l2: AttestationL2;
  let redis: RedisServer | undefined;
  let apiKey: string;
  let apis: RunningApiProcess[] = [];
  let attacker: RedisClient;
  let prefix: string;
  let burners: string[];
  const stopNodes: Array<() => Promise<void>> = [];
  const cleanups: Array<() => Promise<unknown>> = [];

  before(async function () {
    redis = await startRedis();
    if (redis === undefined) requireService(this, REDIS);
    dir = await mkdtemp(path.join(tmpdir(), "hub-bus-auth-"));
    sources = await startSourceFixtures();
    l2 = await startAttestationL2();
    const keysDb = path.join(dir, "keys.sqlite");
    const keys = await ApiKeys.open(keysDb);
    apiKey = (await keys.create("bus-auth")).key;
    await keys.close();
    const env = {
      API_KEYS_DB: keysDb,
      ATTESTATION_L2_RPC_URL: l2.anvil.rpcUrl,
      ATTESTATION_L2_WS_URL: l2.anvil.wsUrl,
      ATTESTATION_NODE_REGISTRY: l2.nodeRegistry,
      ATTESTATION_VERIFIER: l2.verifier,
      ATTESTATION_EVM_CONFIRMATIONS: "0",
      RATE_LIMIT_CAPACITY: "10000",
      RATE_LIMIT_REFILL_PER_SECOND: "10000",
      REDIS_URL: redis.url,
      HUB_BUS_SECRET: randomBytes(32).toString("hex"),
    };
    apis = await Promise.all([0, 1, 2].map(() => spawnApiProcess(sources, env)));
    const name = hubName(DEFAULT_HUB_LABEL, L2_CHAIN_ID, l2.verifier);
    prefix = `avn-hub:{${name}}:`;
    // Node i on process i only: every round needs the answer of a node another process holds (quorum 2).
    const nodes = l2.nodes.slice(0, 3);
    for (const [index, node] of nodes.entries())
      stopNodes.push(
        connectToHub({
          urls: [`ws://127.0.0.1:${apis[index].port}${HUB_PATH}`],
          hubName: name,
          chainId: L2_CHAIN_ID,
          wallet: node.burner,
          signer: honestSigner(sources, node, l2.verifier),
          licenses: () => [node.licenseId],
          logger: pino({ level: "silent" }),
          firstRetryMs: 100,
          maxRetryMs: 200,
        }),
      );
    burners = nodes.map((node) => node.burner.address).sort();
    for (const api of apis)
      await until(`all nodes seen from port ${api.port}`, async () => (await connectedOf(api))?.join() === burners.join(), 30_000);
    attacker = createClient({ url: redis.url });
    await attacker.connect();
  });
  afterEach(async function () {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  after(async function () {
    await attacker?.quit().catch(() => undefined);
    for (const stop of stopNodes) await stop();
    for (const api of apis) await api.stop();
    await redis?.stop();
    await l2?.stop();
    await sources?.stop();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  const { nodesOf, connectedOf, expectAttested } = hubProcessProbes(() => ({ sources, apiKey, l2 }));
  /** `api_attestation_bus_messages_refused_total{kind, reason}` of `api`, from its `/metrics`. */
  const refusedOf = async (api: RunningApiProcess, kind: string, reason: string) => {
    const text = await (await fetch(`http://127.0.0.1:${api.port}/metrics`, { headers: { connection: "close" } })).text();
    const line = text
      .split("\n")
      .find(
        (row) =>
          row.startsWith("api_attestation_bus_messages_refused_total{") &&
          row.includes(`kind="${kind}"`) &&
          row.includes(`reason="${reason}"`),
      );
    return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(" ") + 1));
  };
  const refusedEverywhere = async (kind: string, reason: string) =>
    (await Promise.all(apis.map((api) => refusedOf(api, kind, reason)))).reduce((a, b) => a + b, 0);
  /** A subscription of the attacker's own (pub/sub takes a connection of its own). */
  const subscribe = async (channel: string, listener: (raw: string) => void) => {
    const subscriber = attacker.duplicate();
    await subscriber.connect();
    await subscriber.subscribe(channel, listener);
    cleanups.push(() => subscriber.quit());
  };
  /** A round read off the `rounds` channel: the bus does not hide what it carries, only who may write it. */
  const roundIn = (raw: string): SeenRound | undefined => {
    try {
      const message = JSON.parse(raw) as { body?: unknown };
      const round = (typeof message.body === "string" ? JSON.parse(message.body) : message) as Partial<SeenRound>;
      return typeof round.origin === "string" && Array.isArray(round.burners) && typeof round.request?.id === "string"
        ? (round as SeenRound)
        : undefined;
    } catch {
      return undefined;
    }
  };

  it("honest rounds cross the processes: every process answers with a quorum that needs another's node", async function () {
    for (const api of apis) {
      const { signatures } = await expectAttested(api);
      expect(signatures.length).to.be.at.least(2);
    }
  });

  it("a forged refusal for a real node's burner, on the origin's answers channel, does not hide its genuine answer", async function () {
    // The attacker answers first for every node another process holds, as soon as it sees a round.
    let forged = 0;
    await subscribe(`${prefix}rounds`, (raw) => {
      const round = roundIn(raw);
      if (round === undefined) return;
      for (const burner of round.burners) {
        forged += 1;
        const refusal = { burner, answer: { type: "refusal", id: round.request.id, reason: "forged" } };
        void attacker.publish(`${prefix}answers:${round.origin}`, JSON.stringify(refusal));
      }
    });
    for (const api of apis) {
      const { signatures } = await expectAttested(api);
      // This process holds one node; quorum 2 took a genuine answer from a node another process holds.
      expect(signatures.length).to.be.at.least(2);
    }
    expect(forged, "the attacker saw the rounds and refused for the other nodes").to.be.at.least(apis.length * 2);
    await until("every forged refusal counted", async () => (await refusedEverywhere("answer", "unauthenticated")) >= forged);
  });

  it("a forged round with an origin of the attacker's choosing asks no node: nothing signed reaches its channel", async function () {
    const origin = "attacker";
    const received: string[] = [];
    await subscribe(`${prefix}answers:${origin}`, (raw) => received.push(raw));
    const [sourceBlock, head] = await Promise.all([blockNumberOf(sources.anvil.rpcUrl), l2.ethers.provider.getBlock("latest")]);
    const request = {
      type: "attest",
      id: `forged-${randomBytes(4).toString("hex")}`,
      chain: 0,
      owner: sources.evm.holder,
      asset: sources.evm.erc20,
      sourceBlock: sourceBlock.toString(),
      issuedAt: String(head!.timestamp),
    };
    const round = { origin, deadlineMs: 10_000, burners, request };
    expect(await attacker.publish(`${prefix}rounds`, JSON.stringify(round))).to.equal(apis.length);
    // The same, in the bus's own envelope but sealed with a secret of the attacker's.
    const guessed = new BusEnvelopes(randomBytes(32).toString("hex"));
    const sealed = guessed.seal("round", `${prefix}rounds`, { ...round, request: { ...request, id: `${request.id}-sealed` } });
    expect(await attacker.publish(`${prefix}rounds`, sealed)).to.equal(apis.length);
    // Enough happened for a node to have answered it: a round after it through every process, asking
    // every node, and every node's answer to those rounds counted.
    const answered = (rows: NodesAnswer["nodes"]) =>
      new Map(rows.map((row) => [row.burner, { asked: row.asked, answers: Object.values(row.answers).reduce((a, b) => a + b, 0) }]));
    const before = answered(await nodesOf(apis[0]));
    for (const api of apis) await expectAttested(api);
    await until("every node's answer to those rounds counted", async () =>
      [...answered(await nodesOf(apis[0]))].every(([burner, now]) => {
        const then = before.get(burner) ?? { asked: 0, answers: 0 };
        return now.asked - then.asked === apis.length && now.answers - then.answers === apis.length;
      }),
    );
    expect(received, "answers to the forged round").to.deep.equal([]);
    for (const api of apis)
      await until(`both forged rounds counted on port ${api.port}`, async () => (await refusedOf(api, "round", "unauthenticated")) >= 2);
  });

  it("malformed or unauthenticated presence entries neither break a round (no 500) nor count a node as connected", async function () {
    const absent = l2.nodes[3].burner.address; // licensed, not connected anywhere
    const forge = async (entries: Record<string, string>) => {
      for (const [id, value] of Object.entries(entries)) await attacker.set(`${prefix}presence:${id}`, value, { PX: 60_000 });
      await attacker.sAdd(`${prefix}instances`, Object.keys(entries));
      cleanups.push(async () => {
        await attacker.del(Object.keys(entries).map((id) => `${prefix}presence:${id}`));
        await attacker.sRem(`${prefix}instances`, Object.keys(entries));
      });
    };
    // A session whose licenses are not a list: the round path must never see it.
    await forge({ "forged-malformed": JSON.stringify([{ burner: absent, licenseIds: 4, since: new Date().toISOString() }]) });
    for (const api of apis) await expectAttested(api);
    // A well-formed session for a node that is connected nowhere, and a value that is not even JSON.
    await forge({
      "forged-session": JSON.stringify([{ burner: absent, licenseIds: [String(l2.nodes[3].licenseId)], since: new Date().toISOString() }]),
      "forged-garbage": "not json",
    });
    for (const api of apis) {
      await expectAttested(api);
      expect(await connectedOf(api), "nodes listed as connected").to.deep.equal(burners);
    }
    for (const api of apis)
      await until(`forged presence counted on port ${api.port}`, async () => (await refusedOf(api, "presence", "unauthenticated")) >= 3);
  });

  it("a genuine round, answer or presence value captured and written again, or elsewhere, changes nothing", async function () {
    const rounds: string[] = [];
    await subscribe(`${prefix}rounds`, (raw) => rounds.push(raw));
    const ids = await attacker.sMembers(`${prefix}instances`);
    expect(ids).to.have.length(apis.length);
    const answers: Array<{ id: string; raw: string }> = [];
    for (const id of ids) await subscribe(`${prefix}answers:${id}`, (raw) => answers.push({ id, raw }));
    await expectAttested(apis[0]);
    await until("a round and an answer read off the bus", () => rounds.length > 0 && answers.length > 0);

    // The round again, within its life: the processes that relayed it ask no node twice.
    const replayed = await refusedEverywhere("round", "replayed");
    expect(await attacker.publish(`${prefix}rounds`, rounds[0]), "subscribers: the processes and the attacker").to.equal(apis.length + 1);
    await until(
      "the replayed round refused by the two processes that relayed it",
      async () => (await refusedEverywhere("round", "replayed")) === replayed + 2,
    );
    // An answer meant for one process, on another's channel: its MAC names the channel it was sealed for.
    const misrouted = await refusedEverywhere("answer", "unauthenticated");
    const elsewhere = ids.find((id) => id !== answers[0].id)!;
    expect(await attacker.publish(`${prefix}answers:${elsewhere}`, answers[0].raw), "subscribers: that process and the attacker").to.equal(
      2,
    );
    await until("the moved answer refused", async () => (await refusedEverywhere("answer", "unauthenticated")) === misrouted + 1);
    // A process's presence copied under another instance id: counted once per process that reads it.
    const copied = await refusedEverywhere("presence", "unauthenticated");
    const presence = await attacker.get(`${prefix}presence:${ids[0]}`);
    expect(presence).to.be.a("string");
    await attacker.set(`${prefix}presence:forged-copy`, presence!, { PX: 60_000 });
    await attacker.sAdd(`${prefix}instances`, "forged-copy");
    cleanups.push(async () => {
      await attacker.del(`${prefix}presence:forged-copy`);
      await attacker.sRem(`${prefix}instances`, "forged-copy");
    });
    for (const api of apis) await expectAttested(api);
    await until(
      "the copied presence refused by every process",
      async () => (await refusedEverywhere("presence", "unauthenticated")) >= copied + apis.length,
    );
  });
});

/** The latest block number at `rpcUrl`. */
async function blockNumberOf(rpcUrl: string): Promise<bigint> {
  const response = await fetch(rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] }),
  });
  return BigInt(((await response.json()) as { result: string }).result);
}

/**
 * The envelope and the bus's checks on their own: two `RedisHubBus` instances of one hub in this process on
 * a real Redis, the second with a clock the test moves, so an age bound is crossed without waiting for it.
 */
describe("attestation hub bus: envelopes, age bounds and replays (issue 46)", function () {
  this.timeout(30_000);
  const secret = randomBytes(32).toString("hex");
  const channel = "avn-hub:{test}:answers:a";

  it("test_RevertWhen_SecretShorterThan32: a bus is not built without its secret", function () {
    expect(() => new BusEnvelopes("x".repeat(31))).to.throw(/HUB_BUS_SECRET.*at least 32 characters/);
    expect(() => new BusEnvelopes("")).to.throw(/HUB_BUS_SECRET/);
  });

  it("opens only what was sealed with the same secret, for the same kind and channel, unchanged", function () {
    const envelopes = new BusEnvelopes(secret);
    const body = { burner: "0x0000000000000000000000000000000000000001", answer: { type: "refusal", id: "r", reason: "no" } };
    const sealed = envelopes.seal("answer", channel, body);
    expect(envelopes.open("answer", channel, sealed)).to.deep.include({ body });
    const refused = (kind: BusMessageKind, name: string, raw: string, by = envelopes) => by.open(kind, name, raw);
    const unauthenticated = { refused: "unauthenticated" };
    expect(refused("answer", channel, sealed, new BusEnvelopes(randomBytes(32).toString("hex")))).to.deep.equal(unauthenticated);
    expect(refused("answer", "avn-hub:{test}:answers:b", sealed)).to.deep.equal(unauthenticated); // another instance's
    expect(refused("answer", "avn-hub:{other}:answers:a", sealed)).to.deep.equal(unauthenticated); // another hub's
    expect(refused("round", channel, sealed)).to.deep.equal(unauthenticated); // another purpose
    const envelope = JSON.parse(sealed) as { at: number; body: string; mac: string };
    const tampered = (change: Partial<typeof envelope>) => JSON.stringify({ ...envelope, ...change });
    expect(refused("answer", channel, tampered({ body: envelope.body.replace('"no"', '"yes"') }))).to.deep.equal(unauthenticated);
    expect(refused("answer", channel, tampered({ at: envelope.at + 1 }))).to.deep.equal(unauthenticated);
    expect(refused("answer", channel, tampered({ mac: envelope.mac.slice(0, 20) }))).to.deep.equal(unauthenticated);
    expect(refused("answer", channel, JSON.stringify(body))).to.deep.equal(unauthenticated);
    expect(refused("answer", channel, "not json")).to.deep.equal(unauthenticated);
  });

  it("refuses a message older than its kind's bound, or from further ahead than the clock skew", function () {
    let now = 1_800_000_000_000;
    const envelopes = new BusEnvelopes(secret, () => now);
    const bounds: Record<BusMessageKind, number> = {
      round: MAX_ROUND_DEADLINE_MS,
      answer: MAX_ROUND_DEADLINE_MS,
      done: MAX_ROUND_DEADLINE_MS,
      presence: PRESENCE_TTL_MS,
    };
    for (const [kind, bound] of Object.entries(bounds) as Array<[BusMessageKind, number]>) {
      now = 1_800_000_000_000;
      const sealed = envelopes.seal(kind, channel, []);
      now += bound + MAX_CLOCK_SKEW_MS;
      expect(envelopes.open(kind, channel, sealed), `${kind} at its bound`).to.deep.include({ body: [] });
      now += 1;
      expect(envelopes.open(kind, channel, sealed), `${kind} past its bound`).to.deep.equal({ refused: "stale" });
      now = 1_800_000_000_000 - MAX_CLOCK_SKEW_MS - 1;
      expect(envelopes.open(kind, channel, sealed), `${kind} from ahead`).to.deep.equal({ refused: "stale" });
    }
  });

  it("validates presence like the other messages: addresses, decimal license ids, bounded lists", function () {
    const session = { burner: "0x70997970c51812dc3a010c7d01b50e0d17dc79c8", licenseIds: ["1", "2"], since: new Date().toISOString() };
    expect(parsePresence([session])).to.deep.equal([{ ...session, burner: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8" }]);
    expect(parsePresence([])).to.deep.equal([]);
    for (const bad of [
      { ...session, licenseIds: 4 },
      { ...session, licenseIds: ["0x1"] },
      { ...session, licenseIds: ["1".repeat(79)] },
      { ...session, licenseIds: Array.from({ length: 257 }, (_, index) => String(index)) },
      { ...session, burner: "0x1234" },
      { ...session, since: "yesterday" },
      { burner: session.burner, licenseIds: session.licenseIds },
    ])
      expect(parsePresence([bad]), JSON.stringify(bad).slice(0, 120)).to.equal(undefined);
    expect(parsePresence({ 0: session })).to.equal(undefined);
    expect(parsePresence(Array.from({ length: 10_001 }, () => session))).to.equal(undefined);
  });

  describe("two instances on a real Redis", function () {
    let redis: RedisServer | undefined;
    let offset = 0;
    const metrics = new ApiMetrics();
    const hub = `test-${randomBytes(4).toString("hex")}`;
    const prefix = `avn-hub:{${hub}}:`;
    let first: RedisHubBus;
    let second: RedisHubBus;
    let raw: RedisClient;
    const relayed: RelayedRound[] = [];
    const answered: RelayedAnswer[] = [];
    const results: RelayedDone[] = [];
    const refusedOf = async (kind: BusMessageKind, reason: BusRefusal) =>
      (await metrics.attestationBusRefused.get()).values.find((value) => value.labels.kind === kind && value.labels.reason === reason)
        ?.value ?? 0;

    before(async function () {
      redis = await startRedis();
      if (redis === undefined) requireService(this, REDIS);
      const logger = pino({ level: "silent" });
      first = await RedisHubBus.connect(redis.url, hub, logger, { secret, metrics: new ApiMetrics() });
      // The second reads with a clock the test moves ahead.
      second = await RedisHubBus.connect(redis.url, hub, logger, { secret, metrics, now: () => Date.now() + offset });
      await first.start({ round: () => undefined, answer: () => undefined, done: () => undefined });
      await second.start({
        round: (round) => relayed.push(round),
        answer: (answer) => answered.push(answer),
        done: (done) => results.push(done),
      });
      raw = createClient({ url: redis.url });
      await raw.connect();
    });
    after(async function () {
      await raw?.quit().catch(() => undefined);
      await first?.close();
      await second?.close();
      await redis?.stop();
    });
    beforeEach(() => (offset = 0));

    it("relays a round once: again within its life it is replayed, after its own deadline stale", async function () {
      const captured: string[] = [];
      const subscriber = raw.duplicate();
      await subscriber.connect();
      await subscriber.subscribe(`${prefix}rounds`, (message) => captured.push(message));
      try {
        const round: RelayedRound = {
          origin: first.instanceId,
          deadlineMs: 3_000,
          burners: ["0x70997970C51812dc3A010C7d01b50e0d17dc79C8"],
          request: {
            type: "attest",
            id: "r1",
            chain: 0,
            owner: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
            asset: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
            sourceBlock: "1",
            issuedAt: "1",
          },
        };
        await first.openRound(round);
        await until("the round relayed", () => relayed.length === 1 && captured.length === 1);
        expect(relayed[0]).to.deep.equal(round);
        await raw.publish(`${prefix}rounds`, captured[0]);
        await until("the same round refused as replayed", async () => (await refusedOf("round", "replayed")) === 1);
        // Within the 60 s every round message may live, but past this round's own 3 s deadline.
        offset = 3_000 + MAX_CLOCK_SKEW_MS + 1_000;
        await raw.publish(`${prefix}rounds`, captured[0]);
        await until("the late round refused as stale", async () => (await refusedOf("round", "stale")) === 1);
        expect(relayed).to.have.length(1);
      } finally {
        await subscriber.quit();
      }
    });

    it("delivers a sealed answer to the instance it is for", async function () {
      const answer: RelayedAnswer = {
        burner: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
        answer: { type: "refusal", id: "r1", reason: "not found" },
      };
      first.forwardAnswer(second.instanceId, answer);
      await until("the answer delivered", () => answered.length === 1);
      expect(answered[0]).to.deep.equal(answer);
    });

    it("publishes a round's result to the other instances; a forged, stale or malformed one reaches none", async function () {
      const done: RelayedDone = {
        origin: first.instanceId,
        recipients: ["0x70997970C51812dc3A010C7d01b50e0d17dc79C8"],
        done: {
          type: "roundDone",
          truncated: false,
          id: "r1",
          signatures: [{ licenseIds: ["2"], signature: `0x${"1b".repeat(65)}`, elapsedMs: 12 }],
        },
      };
      await first.publishDone(done);
      await until("the result delivered", () => results.length === 1);
      expect(results[0]).to.deep.equal(done);
      const channel = `${prefix}done`;
      // Written to Redis without the secret, or sealed for another channel: refused before it is parsed.
      await raw.publish(channel, JSON.stringify(done));
      await raw.publish(channel, new BusEnvelopes(secret).seal("done", `${prefix}rounds`, done));
      await until("both refused as unauthenticated", async () => (await refusedOf("done", "unauthenticated")) === 2);
      // Sealed, but a result with an elapsed time past the longest round, or too old by the reader's clock.
      const late = { ...done, done: { ...done.done, signatures: [{ ...done.done.signatures[0], elapsedMs: MAX_ROUND_DEADLINE_MS + 1 }] } };
      await raw.publish(channel, new BusEnvelopes(secret).seal("done", channel, late));
      await until("the malformed one refused", async () => (await refusedOf("done", "malformed")) === 1);
      offset = MAX_ROUND_DEADLINE_MS + MAX_CLOCK_SKEW_MS + 1_000;
      await raw.publish(channel, new BusEnvelopes(secret).seal("done", channel, done));
      await until("the old one refused as stale", async () => (await refusedOf("done", "stale")) === 1);
      expect(results).to.have.length(1);
    });

    it("drops another instance's presence once it is older than its TTL, and an authenticated one that is malformed", async function () {
      const session = { burner: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", licenseIds: ["7"], since: new Date().toISOString() };
      first.publishSessions([session]);
      await until("the first instance's session seen", async () => (await second.peerSessions()).length === 1);
      expect(await second.peerSessions()).to.deep.equal([session]);
      // Rewritten every 5 s: by the second's moved clock, this value should have expired long ago.
      offset = PRESENCE_TTL_MS + MAX_CLOCK_SKEW_MS + 1_000;
      expect(await second.peerSessions()).to.deep.equal([]);
      expect(await refusedOf("presence", "stale")).to.equal(1);
      expect(await second.peerSessions()).to.deep.equal([]);
      expect(await refusedOf("presence", "stale"), "a value refused once is counted once").to.equal(1);
      offset = 0;
      // Sealed with the secret (a bug, or another version), but not a list of sessions: dropped, not thrown.
      const key = `${prefix}presence:other-version`;
      await raw.set(key, new BusEnvelopes(secret).seal("presence", key, [{ ...session, licenseIds: 7 }]), { PX: 10_000 });
      await raw.sAdd(`${prefix}instances`, "other-version");
      expect(await second.peerSessions()).to.deep.equal([session]);
      expect(await refusedOf("presence", "malformed")).to.equal(1);
      // The statistics hashes are not sealed, but what is written there cannot break their listing.
      await raw.sAdd(`${prefix}nodes`, "0xforged");
      await raw.hSet(`${prefix}node:0xforged`, { asked: "many", licenseIds: "{not json", agreed: "-3" });
      const forged = (await second.stats.list()).find((entry) => entry.burner === "0xforged");
      expect(forged).to.deep.include({ asked: 0, licenseIds: [] });
      expect(forged?.answers.agreed).to.equal(0);
    });
  });
});

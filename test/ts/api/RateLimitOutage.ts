import { randomBytes } from "node:crypto";
import { EventEmitter, once } from "node:events";

import { expect } from "chai";
import { Wallet } from "ethers";
import Fastify, { type FastifyInstance } from "fastify";
import { pino, type Logger } from "pino";
import { AggregatorRegistry } from "prom-client";
import { createClient } from "redis";

import { HubBusUnavailableError, RedisHubBus } from "../../../src/api/attestation-hub/bus/redis-bus.ts";
import type { RelayedRound } from "../../../src/api/attestation-hub/bus/bus.ts";
import type { PresentSession } from "../../../src/api/attestation-hub/node-stats.ts";
import { CONNECT_WAIT_MS } from "../../../src/api/redis-connection.ts";
import { ApiMetrics } from "../../../src/api/metrics.ts";
import { FallbackRateLimitStore, IDLE_PROBE_KEY } from "../../../src/api/rate-limit/fallback-store.ts";
import { RedisRateLimitStore } from "../../../src/api/rate-limit/redis-store.ts";
import type { TokenBucketPolicy } from "../../../src/api/rate-limit/token-bucket.ts";
import { registerErrorHandling } from "../../../src/api/server/error-handling.ts";
import { startSourceFixtures, type SourceFixtures } from "../../../src/devnet/source-chains.ts";
import { startTestApi, type TestApi } from "../../helpers/api.ts";
import { REDIS, startControllableRedis, type ControllableRedis } from "../../helpers/redis.ts";
import { requireService } from "../../helpers/services.ts";

type RedisClient = ReturnType<typeof createClient>;
type LogLine = { level: number; msg: string; failure?: { message?: string } };

/** A pino logger whose lines the test reads back. */
function capturedLogger(): { logger: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const logger = pino({ level: "info" }, { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) });
  return { logger, lines };
}
const WARN = 40;
const INFO = 30;

/**
 * Resolves once `holds()` is true: read at once, then again at each `event` that `emitter` emits (the one that can
 * make it true), armed before each read so that none is missed. No timer: `timeoutMs` only bounds the wait, so that
 * a failure names what did not happen.
 */
async function when(
  what: string,
  emitter: EventEmitter,
  event: string,
  holds: () => boolean | Promise<boolean>,
  timeoutMs = 15_000,
): Promise<void> {
  const deadline = AbortSignal.timeout(timeoutMs);
  for (;;) {
    const done = new AbortController();
    const next = once(emitter, event, { signal: AbortSignal.any([deadline, done.signal]) });
    next.catch(() => undefined); // aborted below once it is not needed
    try {
      if (await holds()) return;
      await next;
    } catch (error) {
      if (deadline.aborted) throw new Error(`timed out waiting for ${what}`, { cause: error });
      throw error;
    } finally {
      done.abort();
    }
  }
}

async function gauge(metric: { get(): Promise<{ values: { value: number }[] }> }): Promise<number | undefined> {
  return (await metric.get()).values[0]?.value;
}

/**
 * Issue 53 ("chaos"): Redis killed or paused under an API that keeps its rate limits there. Plain answers go
 * on with per-process buckets (within a second each), the outage is logged once and shown by a gauge, and the
 * shared buckets are used again once Redis answers. A real API server, a real redis-server killed, restarted
 * on its port, stopped and continued.
 */
describe("API rate limits while Redis is down or paused (issue 53)", function () {
  this.timeout(120_000);
  // A bucket of 30 that does not refill within the test: every grant and refusal below is exact.
  const policy: TokenBucketPolicy = { capacity: 30, refillPerSecond: 0.001 };
  const bucketPrefix = "avn:ratelimit:";
  let sources: SourceFixtures | undefined;
  let redis: ControllableRedis | undefined;
  let store: FallbackRateLimitStore | undefined;
  let api: TestApi | undefined;
  let raw: RedisClient | undefined;
  const metrics = new ApiMetrics();
  const { logger, lines } = capturedLogger();
  const outageWarnings = () => lines.filter((line) => line.level === WARN && /rate-limit store \(Redis\) unreachable/.test(line.msg));
  const recoveries = () => lines.filter((line) => line.level === INFO && /rate-limit store \(Redis\) answers again/.test(line.msg));
  let firstKey: string;
  let secondKey: string;

  before(async function () {
    redis = await startControllableRedis();
    if (redis === undefined) requireService(this, REDIS);
    sources = await startSourceFixtures();
    store = new FallbackRateLimitStore({
      shared: await RedisRateLimitStore.connect(redis.url, policy),
      policy,
      metrics,
      logger,
      probeIntervalMs: 100,
    });
    api = await startTestApi(sources, { metrics, rateLimit: { store, policy } });
    firstKey = api.apiKey;
    secondKey = (await api.keys.create("second")).key;
  });
  after(async function () {
    redis?.resume(); // were a test to stop while it is paused
    await raw?.quit().catch(() => undefined);
    await api?.close();
    await store?.close();
    await sources?.stop();
    await redis?.stop();
  });

  /** A plain balance request with `key`, read to its end, and how long it took. */
  const plain = async (key: string) => {
    const started = performance.now();
    const response = await fetch(`${api!.baseUrl}/api/ccq-evm`, {
      method: "POST",
      headers: { authorization: key, "content-type": "application/json" },
      body: JSON.stringify({ user_address: sources!.evm.holder, contract_address: sources!.evm.erc20 }),
    });
    const body = (await response.json()) as { status: number; message: string };
    return { status: response.status, headers: response.headers, body, ms: performance.now() - started };
  };
  const remaining = (answer: { headers: Headers }) => Number(answer.headers.get("ratelimit-remaining"));
  /** The whole tokens Redis holds for the bucket named `name` (as the Lua script stores it, in thousandths). */
  const heldInRedis = async (name: string) => Math.floor(Number(await raw!.hGet(name, "milli")) / 1000);
  const connectRaw = async () => {
    await raw?.quit().catch(() => undefined);
    raw = createClient({ url: redis!.url });
    raw.on("error", () => undefined);
    await raw.connect();
  };

  it("Redis killed: every plain request is answered within 1 s from a per-process bucket, which still refuses past its capacity; one warning, gauge 1", async function () {
    await connectRaw();
    const healthy = await plain(firstKey);
    expect(healthy.status).to.equal(200);
    expect(remaining(healthy), "from Redis").to.equal(29);
    const [bucket] = await raw!.keys(`${bucketPrefix}*`);
    expect(bucket, "the key's bucket lives in Redis").to.be.a("string");
    expect(await heldInRedis(bucket)).to.equal(29);
    expect(await gauge(metrics.rateLimitStoreDegraded)).to.equal(0);

    await raw!.quit();
    raw = undefined;
    await redis!.kill();
    // A burst of 30 at once: a fresh per-process bucket of 30 grants each of them (Redis's had 29 left).
    const answers = await Promise.all(Array.from({ length: 30 }, () => plain(firstKey)));
    for (const answer of answers) {
      expect(answer.status, answer.body.message).to.equal(200);
      expect(answer.ms).to.be.below(1_000);
      expect(answer.headers.get("ratelimit-limit")).to.equal("30");
    }
    expect(answers.map(remaining).sort((a, b) => a - b)).to.deep.equal(Array.from({ length: 30 }, (_, i) => i));
    // The per-process bucket is a limit still: the next request is refused, with its headers.
    const refused = await plain(firstKey);
    expect(refused.status).to.equal(429);
    expect(refused.ms).to.be.below(1_000);
    expect(refused.body.message).to.equal("Rate limit exceeded");
    expect(refused.headers.get("ratelimit-remaining")).to.equal("0");
    expect(Number(refused.headers.get("retry-after"))).to.be.at.least(1);

    expect(store!.degraded).to.equal(true);
    expect(await gauge(metrics.rateLimitStoreDegraded)).to.equal(1);
    expect(await gauge(metrics.rateLimitFallbackTakes)).to.equal(31);
    const exposition = await metrics.exposition();
    expect(exposition).to.match(/^api_rate_limit_store_degraded 1$/m);
    expect(exposition).to.match(/^api_rate_limit_fallback_takes_total 31$/m);
    // 31 takes, and the client's reconnection attempts meanwhile: one warning, no more.
    expect(outageWarnings()).to.have.length(1);
    expect(recoveries()).to.have.length(0);
    expect(lines.filter((line) => line.level >= WARN)).to.have.length(1);
  });

  it("Redis restarted on its port: takes go to the shared bucket again (a state written in Redis is seen), gauge 0, one info line", async function () {
    await redis!.restart();
    await connectRaw();
    // The restarted Redis is empty (but for the bucket of the store's own probe, which may have reached it already);
    // the key's bucket there holds 5 tokens now. The per-process one holds none.
    const probeBucket = `${bucketPrefix}${IDLE_PROBE_KEY}`;
    expect(
      (await raw!.keys(`${bucketPrefix}*`)).filter((key) => key !== probeBucket),
      "nothing survived the restart",
    ).to.deep.equal([]);
    const keyId = (await api!.keys.verify(firstKey))!.id;
    const name = `${bucketPrefix}${keyId}`;
    const now = await redisNow(raw!);
    await raw!.hSet(name, { milli: "5000", at: String(now) });

    // Until the client has reconnected and a probe went through (the store's own, or this request as one), the
    // per-process bucket refuses (429).
    let answer = await plain(firstKey);
    if (answer.status !== 200) {
      expect(answer.status, answer.body.message).to.equal(429);
      expect(answer.ms).to.be.below(1_000);
      await when("the shared store answering again", store!, "recovered", () => !store!.degraded);
      answer = await plain(firstKey);
    }
    expect(answer.status, answer.body.message).to.equal(200);
    expect(remaining(answer), "the bucket written in Redis").to.equal(4);
    expect(await heldInRedis(name)).to.equal(4);
    const next = await plain(firstKey);
    expect(next.status).to.equal(200);
    expect(remaining(next)).to.equal(3);
    expect(await heldInRedis(name)).to.equal(3);

    expect(store!.degraded).to.equal(false);
    expect(await gauge(metrics.rateLimitStoreDegraded)).to.equal(0);
    expect(recoveries()).to.have.length(1);
    expect(outageWarnings()).to.have.length(1);
  });

  it("Redis paused (SIGSTOP): each take falls back within the timeout, every request within 1 s; continued, the shared buckets again", async function () {
    await when("the shared store in use", store!, "recovered", () => !store!.degraded);
    const keyId = (await api!.keys.verify(secondKey))!.id;
    const name = `${bucketPrefix}${keyId}`;
    const healthy = await plain(secondKey);
    expect(healthy.status).to.equal(200);
    expect(remaining(healthy)).to.equal(29);
    const warningsBefore = outageWarnings().length;
    const recoveriesBefore = recoveries().length;

    redis!.pause();
    // Five at once: each waits for Redis at most the take timeout (250 ms), then a fresh per-process bucket answers.
    const burst = await Promise.all(Array.from({ length: 5 }, () => plain(secondKey)));
    const after: Awaited<ReturnType<typeof plain>>[] = [];
    for (let i = 0; i < 15; i += 1) after.push(await plain(secondKey));
    for (const answer of [...burst, ...after]) {
      expect(answer.status, answer.body.message).to.equal(200);
      expect(answer.ms).to.be.below(1_000);
    }
    expect(Math.min(...burst.map((answer) => answer.ms)), "the burst waited for Redis first").to.be.at.least(200);
    // Once degraded, no request waits for the paused Redis any more.
    for (const answer of after) expect(answer.ms).to.be.below(250);
    expect([...burst, ...after].map(remaining).sort((a, b) => b - a)).to.deep.equal(Array.from({ length: 20 }, (_, i) => 29 - i));
    expect(store!.degraded).to.equal(true);
    expect(await gauge(metrics.rateLimitStoreDegraded)).to.equal(1);
    const warnings = outageWarnings().slice(warningsBefore);
    expect(warnings).to.have.length(1);
    expect(warnings[0].failure?.message).to.match(/did not answer within 250 ms/);

    redis!.resume();
    // Continued, Redis answers what it was sent; the next probe (the store's own, or a request as one) finds it
    // answering and ends the degraded mode. Meanwhile, requests are answered as before.
    const meanwhile = await plain(secondKey);
    expect(meanwhile.status).to.equal(200);
    expect(meanwhile.ms).to.be.below(1_000);
    await when("the shared store in use again", store!, "recovered", () => !store!.degraded);
    const shared = await plain(secondKey);
    expect(shared.status).to.equal(200);
    // From Redis: what it holds, and more than the per-process bucket has left (10 at most).
    expect(remaining(shared)).to.equal(await heldInRedis(name));
    expect(remaining(shared)).to.be.above(10);
    expect(await gauge(metrics.rateLimitStoreDegraded)).to.equal(0);
    expect(recoveries().slice(recoveriesBefore)).to.have.length(1);
    expect(outageWarnings().slice(warningsBefore)).to.have.length(1);
  });

  it("in a cluster, the primary reports the degraded gauge as 0 or 1 (the highest worker's) and sums the fallback takes", async function () {
    const workers = [new ApiMetrics(), new ApiMetrics(), new ApiMetrics()];
    workers[1].rateLimitStoreDegraded.set(1);
    workers[2].rateLimitStoreDegraded.set(1);
    workers[1].rateLimitFallbackTakes.inc(4);
    workers[2].rateLimitFallbackTakes.inc(6);
    workers[0].attestationBusDegraded.set(1);
    const summed = AggregatorRegistry.aggregate(await Promise.all(workers.map((worker) => worker.registry.getMetricsAsJSON())));
    const text = await summed.metrics();
    expect(text).to.match(/^api_rate_limit_store_degraded 1$/m);
    expect(text).to.match(/^api_rate_limit_fallback_takes_total 10$/m);
    expect(text).to.match(/^api_attestation_bus_degraded 1$/m);
  });

  it("a stall of this process longer than the timeout, Redis's answer waiting in the socket, is no outage", async function () {
    const quiet = new ApiMetrics();
    const stalled = new FallbackRateLimitStore({
      shared: await RedisRateLimitStore.connect(redis!.url, policy),
      policy,
      metrics: quiet,
      logger: pino({ level: "silent" }),
      timeoutMs: 100,
    });
    try {
      const taking = stalled.take(`stall-${randomBytes(4).toString("hex")}`);
      // One turn for the command to be written and its timer armed, then the event loop held for three timeouts:
      // Redis's answer (under a millisecond away) waits in the socket while the timer expires.
      await new Promise((resolve) => setImmediate(resolve));
      const until = performance.now() + 300;
      while (performance.now() < until);
      expect((await taking).allowed).to.equal(true);
      expect(await gauge(quiet.rateLimitStoreDegraded)).to.equal(0);
    } finally {
      await stalled.close();
    }
  });

  it("a Redis store used without the fallback: a take Redis cannot answer is a 503 that names it, not a 500 about the balance", async function () {
    const bare = await RedisRateLimitStore.connect(redis!.url, policy);
    const bareApi = await startTestApi(sources!, { rateLimit: { store: bare, policy } });
    try {
      expect((await fetchPlain(bareApi)).status).to.equal(200);
      await raw?.quit().catch(() => undefined);
      raw = undefined;
      await redis!.kill();
      const answer = await fetchPlain(bareApi);
      expect(answer.status).to.equal(503);
      expect(answer.headers.get("retry-after")).to.equal("1");
      expect(((await answer.json()) as { message: string }).message).to.equal(
        "Service unavailable: the rate-limit store (Redis) did not answer; retry shortly",
      );
    } finally {
      await bareApi.close();
      await bare.close();
      await redis!.restart();
    }
    function fetchPlain(target: TestApi) {
      return fetch(`${target.baseUrl}/api/ccq-evm`, {
        method: "POST",
        headers: { authorization: target.apiKey, "content-type": "application/json" },
        body: JSON.stringify({ user_address: sources!.evm.holder, contract_address: sources!.evm.erc20 }),
      });
    }
  });
});

/**
 * The hub's bus through the same outages: it says so once (and the recovery once), fails the peers' read at
 * once with a typed error while Redis is away, and `GET /attest/nodes` becomes a 503 that says why.
 */
describe("attestation hub bus while Redis is down or paused (issue 53)", function () {
  this.timeout(60_000);
  const secret = randomBytes(32).toString("hex");
  const hub = `outage-${randomBytes(4).toString("hex")}`;
  let redis: ControllableRedis | undefined;
  let first: RedisHubBus | undefined;
  let second: RedisHubBus | undefined;
  let app: FastifyInstance | undefined;
  const metrics = new ApiMetrics();
  const { logger, lines } = capturedLogger();
  const outageWarnings = () => lines.filter((line) => line.level === WARN && /hub bus \(Redis\) unreachable/.test(line.msg));
  const recoveries = () => lines.filter((line) => line.level === INFO && /hub bus \(Redis\) answers again/.test(line.msg));
  const failures = async (operation: string) =>
    (await metrics.attestationBusFailures.get()).values.find((value) => value.labels.operation === operation)?.value ?? 0;
  const session: PresentSession = { burner: Wallet.createRandom().address, licenseIds: ["7"], since: new Date().toISOString() };
  const handlers = { round: () => undefined, answer: () => undefined, done: () => undefined };

  before(async function () {
    redis = await startControllableRedis();
    if (redis === undefined) requireService(this, REDIS);
    first = await RedisHubBus.connect(redis.url, hub, logger, { secret, metrics, commandTimeoutMs: 250 });
    second = await RedisHubBus.connect(redis.url, hub, pino({ level: "silent" }), { secret, metrics: new ApiMetrics() });
    await first.start(handlers);
    await second.start(handlers);
    // The route as the hub serves it, behind the API's error handling.
    app = Fastify();
    registerErrorHandling(app);
    app.get("/attest/nodes", async () => ({ nodes: await first!.stats.list() }));
    await app.listen({ port: 0, host: "127.0.0.1" });
  });
  after(async function () {
    redis?.resume();
    await app?.close();
    await first?.close();
    await second?.close();
    await redis?.stop();
  });

  const nodesUrl = () => {
    const address = app!.server.address() as { port: number };
    return `http://127.0.0.1:${address.port}/attest/nodes`;
  };
  const peersOfSecond = async () => (await second!.peerSessions().catch(() => [])).map((peer) => peer.burner);

  it("Redis killed: unreachable at once, peers refused fast with a typed error, /attest/nodes a 503; one warning however much failed", async function () {
    first!.publishSessions([session]);
    // Read again each time the first has written its presence.
    await when("the second instance sees the first's node", first!, "presence", async () =>
      (await peersOfSecond()).includes(session.burner),
    );
    expect((await fetch(nodesUrl())).status).to.equal(200);
    expect(first!.reachable).to.equal(true);
    expect(await gauge(metrics.attestationBusDegraded)).to.equal(0);

    await redis!.kill();
    await when("the bus unreachable", first!, "unreachable", () => !first!.reachable);
    const started = performance.now();
    const refused = await first!.peerSessions().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(performance.now() - started).to.be.below(250);
    expect(refused).to.be.instanceOf(HubBusUnavailableError);
    expect((refused as HubBusUnavailableError).code).to.equal("HUB_BUS_UNREACHABLE");
    expect((refused as HubBusUnavailableError).message).to.equal("the hub bus (Redis) is unreachable");
    // Writes while it is away: dropped and counted, not logged one by one.
    for (let i = 0; i < 50; i += 1) first!.stats.asked(session.burner);
    first!.publishSessions([session]);
    const nodes = await fetch(nodesUrl());
    expect(nodes.status).to.equal(503);
    expect(nodes.headers.get("retry-after")).to.equal("1");
    expect(((await nodes.json()) as { message: string }).message).to.equal(
      "Service unavailable: the hub bus (Redis) is unreachable; retry shortly",
    );
    // Enough happened: the writes counted, and the client failed to reconnect several times.
    expect(await failures("stats-write")).to.equal(50);
    await when("three failed reconnections", first!, "failure", async () => (await failures("connection")) >= 3);
    expect(await gauge(metrics.attestationBusDegraded)).to.equal(1);
    expect(outageWarnings()).to.have.length(1);
    expect(lines.filter((line) => line.level >= WARN)).to.have.length(1);
  });

  it("Redis restarted on its port: reachable again, its presence republished, one info line", async function () {
    await redis!.restart();
    await when("the bus reachable again", first!, "reachable", () => first!.reachable);
    expect(await gauge(metrics.attestationBusDegraded)).to.equal(0);
    // The restarted Redis lost every presence: the first publishes its own again on recovery.
    await when("the second instance sees the first's node again", first!, "presence", async () =>
      (await peersOfSecond()).includes(session.burner),
    );
    expect((await fetch(nodesUrl())).status).to.equal(200);
    expect(recoveries()).to.have.length(1);
    expect(outageWarnings()).to.have.length(1);
  });

  it("Redis paused: the peers' read gives up within the command timeout, the next ones at once; continued, reachable again", async function () {
    const warningsBefore = outageWarnings().length;
    redis!.pause();
    let started = performance.now();
    const timedOut = await first!.peerSessions().then(
      () => undefined,
      (error: unknown) => error,
    );
    const waited = performance.now() - started;
    expect(timedOut).to.be.instanceOf(HubBusUnavailableError);
    expect(waited).to.be.within(200, 1_000);
    expect(first!.reachable).to.equal(false);
    started = performance.now();
    await first!.peerSessions().catch(() => undefined);
    expect(performance.now() - started, "refused without asking Redis").to.be.below(250);
    expect((await fetch(nodesUrl())).status).to.equal(503);
    const warnings = outageWarnings().slice(warningsBefore);
    expect(warnings).to.have.length(1);
    expect(warnings[0].failure?.message).to.match(/did not answer within 250 ms/);

    redis!.resume();
    // The PING sent while it was paused is answered now.
    await when("the bus reachable again", first!, "reachable", () => first!.reachable);
    expect(await gauge(metrics.attestationBusDegraded)).to.equal(0);
    expect((await fetch(nodesUrl())).status).to.equal(200);
    expect(recoveries()).to.have.length(2);
    expect(outageWarnings().slice(warningsBefore)).to.have.length(1);
  });
});

describe("an API process started while Redis is down (issue 53)", function () {
  this.timeout(60_000);
  let redis: ControllableRedis | undefined;
  const closing: Array<() => Promise<unknown>> = [];

  before(async function () {
    redis = await startControllableRedis();
    if (redis === undefined) requireService(this, REDIS);
    await redis.kill();
  });
  after(async function () {
    for (const close of closing.reverse()) await close().catch(() => undefined);
    await redis?.stop();
  });

  it("starts its rate limits degraded within the connect wait, and uses Redis once it is up", async function () {
    const policy: TokenBucketPolicy = { capacity: 5, refillPerSecond: 0.001 };
    const metrics = new ApiMetrics();
    const started = performance.now();
    const shared = await RedisRateLimitStore.connect(redis!.url, policy);
    expect(performance.now() - started).to.be.below(CONNECT_WAIT_MS + 1_000);
    const store = new FallbackRateLimitStore({ shared, policy, metrics, logger: pino({ level: "silent" }), probeIntervalMs: 100 });
    closing.push(() => store.close());
    expect((await store.take("k")).allowed).to.equal(true);
    expect(await gauge(metrics.rateLimitStoreDegraded)).to.equal(1);
    await redis!.restart();
    // The connection started at the start comes up; a probe finds Redis and the shared buckets are used again.
    await when("the shared store used again", store, "recovered", () => !store.degraded);
    expect(await gauge(metrics.rateLimitStoreDegraded)).to.equal(0);
    const fallbackTakes = await gauge(metrics.rateLimitFallbackTakes);
    expect((await store.take("k")).allowed).to.equal(true);
    expect(await gauge(metrics.rateLimitFallbackTakes), "a take answered by Redis").to.equal(fallbackTakes);
    await redis!.kill();
  });

  it("starts its hub bus unreachable, its own nodes only, and subscribes and shares its presence once Redis is up", async function () {
    const secret = randomBytes(32).toString("hex");
    const hub = `late-${randomBytes(4).toString("hex")}`;
    const metrics = new ApiMetrics();
    const rounds: string[] = [];
    const roundsSeen = new EventEmitter();
    const started = performance.now();
    const late = await RedisHubBus.connect(redis!.url, hub, pino({ level: "silent" }), { secret, metrics, commandTimeoutMs: 250 });
    closing.push(() => late.close());
    let subscribed = false;
    late.once("subscribed", () => (subscribed = true));
    await late.start({
      round: (round) => {
        rounds.push(round.request.id);
        roundsSeen.emit("round");
      },
      answer: () => undefined,
      done: () => undefined,
    });
    expect(performance.now() - started).to.be.below(CONNECT_WAIT_MS + 1_000);
    expect(late.reachable).to.equal(false);
    expect(await gauge(metrics.attestationBusDegraded)).to.equal(1);
    const session: PresentSession = { burner: Wallet.createRandom().address, licenseIds: ["9"], since: new Date().toISOString() };
    late.publishSessions([session]);
    expect(subscribed, "subscribed while Redis is down").to.equal(false);

    await redis!.restart();
    await when("the late bus reachable", late, "reachable", () => late.reachable);
    const other = await RedisHubBus.connect(redis!.url, hub, pino({ level: "silent" }), { secret, metrics: new ApiMetrics() });
    closing.push(() => other.close());
    await other.start({ round: () => undefined, answer: () => undefined, done: () => undefined });
    // Its presence, published on recovery, reaches the other instance; a round the other opens reaches it.
    await when("the other instance sees the late one's node", late, "presence", async () =>
      (await other.peerSessions().catch(() => [])).some((peer) => peer.burner === session.burner),
    );
    const request = {
      type: "attest",
      id: randomBytes(12).toString("hex"),
      chain: 0,
      owner: Wallet.createRandom().address,
      asset: Wallet.createRandom().address,
      sourceBlock: "1",
      issuedAt: String(Math.floor(Date.now() / 1000)),
    } as RelayedRound["request"];
    // Subscribed once its connection came up: a round published from then on reaches it.
    await when("the late instance subscribed", late, "subscribed", () => subscribed);
    await other.openRound({ origin: other.instanceId, deadlineMs: 3_000, burners: [session.burner], request });
    await when("the round reaching the late instance", roundsSeen, "round", () => rounds.includes(request.id));
  });
});

/**
 * An API process that gets no request after an outage: the store probes Redis on a timer of its own while
 * degraded, so its gauge says when Redis is back without a request to find it out.
 */
describe("an idle API process after a Redis outage (issue 53)", function () {
  this.timeout(60_000);
  const bucketPrefix = "avn:ratelimit:";
  let redis: ControllableRedis | undefined;
  let store: FallbackRateLimitStore | undefined;
  let raw: RedisClient | undefined;

  before(async function () {
    redis = await startControllableRedis();
    if (redis === undefined) requireService(this, REDIS);
  });
  after(async function () {
    await raw?.quit().catch(() => undefined);
    await store?.close();
    await redis?.stop();
  });

  it("Redis restarted and no request sent: the store's own probe finds it, gauge 0 and one info line; the probe charged no key", async function () {
    const policy: TokenBucketPolicy = { capacity: 5, refillPerSecond: 0.001 };
    const metrics = new ApiMetrics();
    const { logger, lines } = capturedLogger();
    store = new FallbackRateLimitStore({
      shared: await RedisRateLimitStore.connect(redis!.url, policy),
      policy,
      metrics,
      logger,
      probeIntervalMs: 100,
    });
    expect((await store.take("k")).remaining, "from Redis").to.equal(4);
    await redis!.kill();
    expect((await store.take("k")).remaining, "from a fresh per-process bucket").to.equal(4);
    expect(store.degraded).to.equal(true);
    expect(await gauge(metrics.rateLimitStoreDegraded)).to.equal(1);

    await redis!.restart();
    // No take from here on: only the store's timer (every 100 ms here, a second by default) can find Redis back.
    await when("the idle store using Redis again", store, "recovered", () => !store!.degraded);
    expect(await gauge(metrics.rateLimitStoreDegraded)).to.equal(0);
    expect(await gauge(metrics.rateLimitFallbackTakes), "the one take served while Redis was down").to.equal(1);
    const recovered = lines.filter((line) => line.level === INFO && /rate-limit store \(Redis\) answers again/.test(line.msg));
    expect(recovered).to.have.length(1);
    expect(recovered[0]).to.include({ fallbackTakes: 1 });
    expect(lines.filter((line) => line.level === WARN)).to.have.length(1);

    // The probe that Redis answered took one token from a bucket of its own: the key's bucket is not in the restarted Redis.
    raw = createClient({ url: redis!.url });
    raw.on("error", () => undefined);
    await raw.connect();
    const probeBucket = `${bucketPrefix}${IDLE_PROBE_KEY}`;
    expect(await raw.keys(`${bucketPrefix}*`)).to.deep.equal([probeBucket]);
    expect(await raw.hGet(probeBucket, "milli"), "one probe answered").to.equal("4000");
    // The next take is Redis's: the key's bucket there, nothing more served per process.
    expect((await store.take("k")).remaining).to.equal(4);
    expect(await raw.keys(`${bucketPrefix}*`)).to.have.members([probeBucket, `${bucketPrefix}k`]);
    expect(await gauge(metrics.rateLimitFallbackTakes)).to.equal(1);
  });
});

/** Redis's clock in milliseconds (the Lua script's `now`). */
async function redisNow(client: RedisClient): Promise<number> {
  const [seconds, microseconds] = await client.sendCommand<[string, string]>(["TIME"]);
  return Number(seconds) * 1000 + Math.floor(Number(microseconds) / 1000);
}

import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

import { expect } from "chai";
import { Wallet } from "ethers";
import { pino } from "pino";
import { WebSocket as WsClient, WebSocketServer, type RawData } from "ws";

import { LicenseChecker } from "../../../src/api/attestation-hub/license-checker.ts";
import type { NodeStats } from "../../../src/api/attestation-hub/node-stats.ts";
import { HubSessions, type HubAdmissionOptions } from "../../../src/api/attestation-hub/sessions.ts";
import { ApiMetrics } from "../../../src/api/metrics.ts";
import { challengeText, DEFAULT_HUB_LABEL, HUB_PATH, hubName } from "../../../src/common/hub-protocol.ts";
import { expectedHubName, hubUrlsOf, loadNodeConfig } from "../../../src/node/config.ts";
import { connectToHub } from "../../../src/node/hub-client.ts";
import { L2_CHAIN_ID, startAttestationL2, until, type AttestationL2 } from "./fixture.ts";

type Challenge = { type: "challenge"; hub: string; chainId: string; nonce: string };
type Opened = { ws: WsClient; challenge: Challenge; closed: Promise<{ code: number; reason: string }> };
const silent = { answer: () => new Promise<never>(() => undefined) };
const quiet = pino({ level: "silent" });
/** The close reason of a hello naming a license that is not the burner's, or from a burner that is not live. */
const NOT_OPERATOR_REASON = "a named license is not delegated to this burner, or the burner sent no heartbeat within the liveness window";

/** A `ws` frame as text. */
const text = (data: RawData) => (Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as Buffer)).toString("utf8");

/** Listens on a free loopback port; resolves with the port. */
async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

describe("attestation hub: limits before login and one hub identity (issues 31, 46)", function () {
  this.timeout(120_000);
  let l2: AttestationL2;
  /**
   * A JSON-RPC proxy in front of the L2 that counts the HTTP requests the hub sends and the `eth_call`s
   * they carry (a JSON-RPC batch is one request of many calls: what the node executes is the calls).
   */
  let rpcProxy: Server;
  let rpcUrl: string;
  let rpcRequests = 0;
  let ethCalls = 0;
  /** While set, the proxy holds every request until it settles (an L2 slower than the challenge timeout). */
  let stalled: Promise<void> | undefined;
  const cleanups: Array<() => Promise<void> | void> = [];

  before(async function () {
    l2 = await startAttestationL2();
    rpcProxy = createServer((request, response) => {
      rpcRequests += 1;
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => {
        const body = Buffer.concat(chunks);
        const parsed = JSON.parse(body.toString("utf8")) as { method: string } | Array<{ method: string }>;
        ethCalls += (Array.isArray(parsed) ? parsed : [parsed]).filter((call) => call.method === "eth_call").length;
        void Promise.resolve(stalled)
          .then(() => fetch(l2.anvil.rpcUrl, { method: "POST", headers: { "content-type": "application/json" }, body }))
          .then(async (upstream) => response.writeHead(upstream.status, { "content-type": "application/json" }).end(await upstream.text()))
          .catch(() => response.writeHead(502).end());
      });
    });
    rpcUrl = `http://127.0.0.1:${await listen(rpcProxy)}`;
  });
  afterEach(async function () {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  after(async function () {
    rpcProxy?.close();
    await l2?.stop();
  });

  const name = () => hubName(DEFAULT_HUB_LABEL, L2_CHAIN_ID, l2.verifier);

  /** A fresh burner operating `count` more licenses (airdropped to a fresh owner, delegated), heart-beating. */
  async function delegateMany(count: number) {
    const [admin] = await l2.ethers.getSigners();
    const owner = Wallet.createRandom(l2.ethers.provider);
    const burner = Wallet.createRandom(l2.ethers.provider);
    for (const wallet of [owner, burner]) await (await admin.sendTransaction({ to: wallet.address, value: 10n ** 18n })).wait();
    const first = (await l2.contracts.license.totalMinted()) + 1n;
    await (await l2.contracts.license.connect(admin).airdrop(owner.address, count)).wait();
    const licenseIds = Array.from({ length: count }, (_, index) => first + BigInt(index));
    await (await l2.contracts.nodeRegistry.connect(owner).delegate(licenseIds, burner.address)).wait();
    await (await l2.contracts.nodeRegistry.connect(burner)["heartbeat(uint32)"](1)).wait();
    return { owner, burner, licenseIds };
  }

  /** The hub's sessions on an HTTP server of their own, reading the L2 through the counting proxy. */
  async function startHub(admission: HubAdmissionOptions, options: { challengeTimeoutMs?: number } = {}) {
    const metrics = new ApiMetrics();
    const checker = new LicenseChecker({ l2RpcUrl: rpcUrl, nodeRegistry: l2.nodeRegistry, metrics });
    await checker.chainId(); // the network, read once
    const admitted: string[] = [];
    const stats = { connected: (burner: string) => admitted.push(burner), disconnected: () => undefined, licenses: () => undefined };
    const sessions = new HubSessions({
      hubName: name(),
      chainId: L2_CHAIN_ID,
      checker,
      stats: stats as unknown as NodeStats,
      metrics,
      logger: quiet,
      recheckMs: 60_000,
      challengeTimeoutMs: options.challengeTimeoutMs,
      admission: { hellosPerSecond: 1_000, ...admission },
      onAnswer: () => undefined,
    });
    const server = createServer();
    sessions.attach(server);
    const port = await listen(server);
    cleanups.push(async () => {
      await sessions.close();
      checker.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    });
    const refused = async (reason: string) =>
      (await metrics.attestationRefusedConnections.get()).values.find((value) => value.labels.reason === reason)?.value ?? 0;
    return { url: `ws://127.0.0.1:${port}${HUB_PATH}`, port, sessions, metrics, refused, admitted };
  }

  /** Opens a raw WebSocket: the challenge, or the HTTP status the upgrade was refused with. */
  function open(url: string, headers: IncomingHttpHeaders = {}): Promise<Opened | { status: number }> {
    return new Promise((resolve, reject) => {
      const ws = new WsClient(url, { headers: headers as Record<string, string> });
      cleanups.push(() => ws.terminate());
      const closed = new Promise<{ code: number; reason: string }>((done) =>
        ws.on("close", (code, reason) => done({ code, reason: reason.toString() })),
      );
      ws.on("unexpected-response", (_request, response) => {
        resolve({ status: response.statusCode ?? 0 });
        ws.terminate();
      });
      ws.on("error", () => undefined);
      ws.once("message", (data) => resolve({ ws, challenge: JSON.parse(text(data)) as Challenge, closed }));
      setTimeout(() => reject(new Error("no challenge and no refusal")), 5_000).unref();
    });
  }
  const challenged = async (url: string, headers?: IncomingHttpHeaders) => {
    const opened = await open(url, headers);
    if ("status" in opened) throw new Error(`upgrade refused: ${opened.status}`);
    return opened;
  };
  const statusOf = async (url: string, headers?: IncomingHttpHeaders) => {
    const opened = await open(url, headers);
    return "status" in opened ? opened.status : "challenged";
  };
  /** A signed hello for `url` (the hub's own unless told), naming `licenseIds`. */
  const hello = async (wallet: Pick<Wallet, "address" | "signMessage">, { challenge }: Opened, url: string, licenseIds = ["1"]) => ({
    type: "hello",
    burner: wallet.address,
    url,
    licenseIds,
    signature: await wallet.signMessage(challengeText(challenge.hub, challenge.chainId, url, challenge.nonce)),
  });
  const login = async (opened: Opened, message: unknown) => (await loginClosed(opened, message)).code;
  /** Sends `message` as the hello; resolves with the close code and reason. */
  const loginClosed = (opened: Opened, message: unknown) => {
    opened.ws.send(JSON.stringify(message));
    return opened.closed;
  };
  /** Sends `message` as the hello; resolves with the licenses of the welcome, or the close code and reason. */
  const welcomed = (opened: Opened, message: unknown) =>
    new Promise<string[] | { code: number; reason: string }>((resolve) => {
      opened.ws.once("message", (data) => resolve((JSON.parse(text(data)) as { licenseIds: string[] }).licenseIds));
      void opened.closed.then(resolve);
      opened.ws.send(JSON.stringify(message));
    });

  it("answers 503 to the upgrade beyond ATTESTATION_MAX_PENDING: N pending get a challenge, the N+1st none", async function () {
    const hub = await startHub({ maxPending: 3, maxPendingPerAddress: 10 });
    const first = [await challenged(hub.url), await challenged(hub.url), await challenged(hub.url)];
    expect(hub.sessions.pending).to.equal(3);
    expect(await statusOf(hub.url)).to.equal(503);
    expect(await hub.refused("pending-cap")).to.equal(1);
    first[0].ws.close();
    await until("a slot freed", () => hub.sessions.pending === 2);
    expect(await statusOf(hub.url)).to.equal("challenged");
  });

  it("answers 429 beyond ATTESTATION_MAX_PENDING_PER_ADDRESS, by X-Forwarded-For from a trusted proxy", async function () {
    const hub = await startHub({ maxPending: 50, maxPendingPerAddress: 2, trustedProxies: ["loopback"] });
    const client = { "x-forwarded-for": "203.0.113.7" };
    await challenged(hub.url, client);
    await challenged(hub.url, client);
    expect(await statusOf(hub.url, client)).to.equal(429);
    expect(await statusOf(hub.url, { "x-forwarded-for": "203.0.113.8" })).to.equal("challenged");
    expect(await hub.refused("address-cap")).to.equal(1);
  });

  it("ignores X-Forwarded-For from a proxy it does not trust: the socket's address is counted", async function () {
    const hub = await startHub({ maxPending: 50, maxPendingPerAddress: 2, trustedProxies: ["10.0.0.0/8"] });
    await challenged(hub.url, { "x-forwarded-for": "203.0.113.1" });
    await challenged(hub.url, { "x-forwarded-for": "203.0.113.2" });
    expect(await statusOf(hub.url, { "x-forwarded-for": "203.0.113.3" })).to.equal(429);
  });

  it("checks ATTESTATION_HELLOS_PER_SECOND hellos with a burst of twice as many; the next closes 4429 before any L2 read", async function () {
    const hub = await startHub({ maxPendingPerAddress: 10, hellosPerSecond: 1 });
    const sockets = [await challenged(hub.url), await challenged(hub.url), await challenged(hub.url)];
    const hellos = await Promise.all(sockets.map((socket) => hello(Wallet.createRandom(), socket, hub.url)));
    const before = rpcRequests;
    const codes = await Promise.all(sockets.map((socket, index) => login(socket, hellos[index])));
    expect(codes.sort()).to.deep.equal([4403, 4403, 4429]);
    expect(await hub.refused("hello-rate")).to.equal(1);
    expect(rpcRequests - before).to.be.at.most(2);
  });

  it("costs one L2 request for a bogus hello naming 256 licenses, none for its key again, at most one each for many keys", async function () {
    const hub = await startHub({ maxPendingPerAddress: 4, trustedProxies: ["loopback"] });
    const stranger = Wallet.createRandom();
    const ids = Array.from({ length: 256 }, (_, index) => String(index + 1));
    const requestsBeforeHellos = rpcRequests;
    let before = rpcRequests;
    let callsBefore = ethCalls;
    const first = await challenged(hub.url);
    expect(await login(first, await hello(stranger, first, hub.url, ids))).to.equal(4403);
    expect(rpcRequests - before).to.equal(1);
    expect(ethCalls - callsBefore, "eth_calls for 256 named licenses").to.equal(1);
    before = rpcRequests;
    callsBefore = ethCalls;
    const again = await challenged(hub.url);
    expect(await login(again, await hello(stranger, again, hub.url, ids))).to.equal(4403);
    expect(rpcRequests - before).to.equal(0);
    expect(ethCalls - callsBefore).to.equal(0);
    expect(await hub.refused("refused-recently")).to.equal(1);
    // 40 fresh keys from 40 addresses, 10 at a time: each costs at most one request.
    before = rpcRequests;
    callsBefore = ethCalls;
    for (let round = 0; round < 4; round += 1)
      await Promise.all(
        Array.from({ length: 10 }, async (_, index) => {
          const socket = await challenged(hub.url, { "x-forwarded-for": `198.51.100.${round * 10 + index}` });
          expect(await login(socket, await hello(Wallet.createRandom(), socket, hub.url))).to.equal(4403);
        }),
      );
    expect(rpcRequests - before).to.be.at.most(40);
    expect(ethCalls - callsBefore).to.equal(40);
    expect(await hub.refused("not-operator")).to.equal(41);
    // What /metrics says the logins cost: the requests the proxy counted (the network read of chainId() before aside).
    expect((await hub.metrics.attestationL2Requests.get()).values.find((value) => value.labels.purpose === "login")?.value).to.equal(
      rpcRequests - requestsBeforeHellos,
    );
  });

  it("refuses an address that sent ATTESTATION_MAX_PENDING_PER_ADDRESS bad hellos (429) for the refusal memory", async function () {
    // The refusal memory reads a clock the test moves: the window passes when the test says, not after a sleep.
    let now = Date.now();
    const hub = await startHub({ maxPendingPerAddress: 3, trustedProxies: ["loopback"], refusalMemoryMs: 1_000, now: () => now });
    const attacker = { "x-forwarded-for": "192.0.2.1" };
    const forger = Wallet.createRandom();
    for (let strike = 0; strike < 3; strike += 1) {
      const socket = await challenged(hub.url, attacker);
      const forged = { ...(await hello(forger, socket, hub.url)), burner: Wallet.createRandom().address };
      expect(await login(socket, forged)).to.equal(4401);
    }
    expect(await statusOf(hub.url, attacker)).to.equal(429);
    expect(await hub.refused("refused-recently")).to.equal(1);
    expect(await statusOf(hub.url, { "x-forwarded-for": "192.0.2.2" })).to.equal("challenged");
    now += 999;
    expect(await statusOf(hub.url, attacker), "still within the refusal memory").to.equal(429);
    now += 1;
    expect(await statusOf(hub.url, attacker), "the refusal memory over").to.equal("challenged");
  });

  it("checks a hello with one isLiveOperatorOf eth_call, however many licenses it names; one not the burner's refuses it (4403)", async function () {
    const { owner, burner, licenseIds } = await delegateMany(96);
    const hub = await startHub({});
    const ids = licenseIds.map(String);
    // 96 licenses delegated to the burner and 160 that are not: a full hello of 256 ids.
    const foreign = Array.from({ length: 256 - ids.length }, (_, index) => String(1_000 + index));
    let callsBefore = ethCalls;
    const mixed = await challenged(hub.url);
    expect(await welcomed(mixed, await hello(burner, mixed, hub.url, [...ids, ...foreign]))).to.deep.equal({
      code: 4403,
      reason: NOT_OPERATOR_REASON,
    });
    expect(ethCalls - callsBefore, "eth_calls for a hello of 256 ids").to.equal(1);
    expect(await hub.refused("not-operator")).to.equal(1);
    // The same burner naming its own licenses is checked afresh (the refusal is remembered for that list only).
    callsBefore = ethCalls;
    const own = await challenged(hub.url);
    expect(await welcomed(own, await hello(burner, own, hub.url, ids))).to.deep.equal(ids);
    expect(ethCalls - callsBefore, "eth_calls for an admitted hello of 96 ids").to.equal(1);
    expect(hub.admitted).to.deep.equal([burner.address]);
    // The periodic re-check costs one eth_call too while every license stays live…
    callsBefore = ethCalls;
    await hub.sessions.recheck();
    expect(ethCalls - callsBefore, "eth_calls for a re-check of 96 ids").to.equal(1);
    // …and when one is undelegated, the license-by-license reads find the others: the session keeps them.
    await (await l2.contracts.nodeRegistry.connect(owner).undelegate([licenseIds[0]])).wait();
    await hub.sessions.recheck();
    expect(hub.sessions.list().map((session) => session.licenseIds.map(String))).to.deep.equal([ids.slice(1)]);
    expect(await hub.refused("licenses-lost")).to.equal(0);
  });

  it("keys an IPv6 source on its /64 (one subscriber's prefix): its addresses share ATTESTATION_MAX_PENDING_PER_ADDRESS", async function () {
    const hub = await startHub({ maxPending: 50, maxPendingPerAddress: 2, trustedProxies: ["loopback"] });
    const from = (address: string) => ({ "x-forwarded-for": address });
    await challenged(hub.url, from("2001:db8:46:1::a"));
    await challenged(hub.url, from("2001:db8:46:1:ffff:ffff:ffff:ffff"));
    expect(await statusOf(hub.url, from("2001:0db8:0046:0001:0000:0000:0000:000b"))).to.equal(429);
    expect(await statusOf(hub.url, from("2001:db8:46:1:1234::c"))).to.equal(429);
    expect(await hub.refused("address-cap")).to.equal(2);
    expect(hub.sessions.pending).to.equal(2);
    expect(await statusOf(hub.url, from("2001:db8:46:2::a")), "the next /64").to.equal("challenged");
    // IPv4 stays per address; an IPv4-mapped IPv6 address is its IPv4 address.
    await challenged(hub.url, from("203.0.113.46"));
    await challenged(hub.url, from("::ffff:203.0.113.46"));
    expect(await statusOf(hub.url, from("203.0.113.46"))).to.equal(429);
    expect(await statusOf(hub.url, from("203.0.113.47"))).to.equal("challenged");
  });

  it("strikes a connection that sends no hello within the challenge timeout: ATTESTATION_MAX_PENDING_PER_ADDRESS of them refuse the address (429)", async function () {
    const hub = await startHub({ maxPendingPerAddress: 3, trustedProxies: ["loopback"] }, { challengeTimeoutMs: 200 });
    const idle = { "x-forwarded-for": "192.0.2.46" };
    const sockets = await Promise.all([1, 2, 3].map(() => challenged(hub.url, idle)));
    for (const socket of sockets) expect(await socket.closed).to.deep.equal({ code: 4401, reason: "no answer to the challenge" });
    expect(await hub.refused("timeout")).to.equal(3);
    expect(await statusOf(hub.url, idle)).to.equal(429);
    expect(await hub.refused("refused-recently")).to.equal(1);
    expect(await statusOf(hub.url, { "x-forwarded-for": "192.0.2.47" })).to.equal("challenged");
    // A /64 is struck as one address.
    const idle6 = await Promise.all([1, 2, 3].map((host) => challenged(hub.url, { "x-forwarded-for": `2001:db8:46:7::${host}` })));
    for (const socket of idle6) expect((await socket.closed).code).to.equal(4401);
    expect(await statusOf(hub.url, { "x-forwarded-for": "2001:db8:46:7:ffff::9" })).to.equal(429);
  });

  it("strikes no hello still being checked when the challenge times out: the L2 being slow is not the node's fault (4429)", async function () {
    const hub = await startHub({ maxPendingPerAddress: 2, trustedProxies: ["loopback"] }, { challengeTimeoutMs: 200 });
    const [node] = l2.nodes;
    const client = { "x-forwarded-for": "192.0.2.48" };
    let release = () => undefined as void;
    stalled = new Promise<void>((resolve) => (release = resolve));
    try {
      for (let attempt = 0; attempt < 2; attempt += 1) {
        const socket = await challenged(hub.url, client);
        expect(await loginClosed(socket, await hello(node.burner, socket, hub.url, [String(node.licenseId)]))).to.deep.equal({
          code: 4429,
          reason: "the license check took too long; try again later",
        });
      }
    } finally {
      release();
      stalled = undefined;
    }
    expect(await hub.refused("timeout")).to.equal(2);
    expect(await statusOf(hub.url, client)).to.equal("challenged");
  });

  it("refuses a hello larger than the pre-login frame cap (4400)", async function () {
    const hub = await startHub({});
    const socket = await challenged(hub.url);
    expect(await login(socket, { type: "hello", padding: "x".repeat(9 * 1024) })).to.equal(4400);
    expect(await hub.refused("protocol")).to.equal(1);
  });

  it("refuses at login a node reached through a relay that forwards the real hub's challenge (4421), and a rewritten URL (4401)", async function () {
    const hub = await startHub({});
    const [node] = l2.nodes;
    /** A WebSocket server that forwards frames both ways to the real hub (`rewrite` may change the node's frames). */
    const startRelay = async (rewrite: (frame: string) => string = (frame) => frame) => {
      const server = createServer();
      const relay = new WebSocketServer({ server });
      relay.on("connection", (downstream) => {
        const upstream = new WsClient(hub.url);
        const queued: string[] = [];
        upstream.on("open", () => queued.splice(0).forEach((frame) => upstream.send(frame)));
        upstream.on("message", (data) => downstream.send(text(data)));
        upstream.on("close", (code, reason) => downstream.close(code >= 4000 ? code : 1000, reason.toString()));
        upstream.on("error", () => undefined);
        downstream.on("message", (data) => {
          const frame = rewrite(text(data));
          if (upstream.readyState === WsClient.OPEN) upstream.send(frame);
          else queued.push(frame);
        });
        downstream.on("close", () => upstream.close());
      });
      const port = await listen(server);
      cleanups.push(async () => {
        for (const client of relay.clients) client.terminate();
        relay.close();
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      });
      return `ws://127.0.0.1:${port}${HUB_PATH}`;
    };
    const nodeVia = (urls: string[]) => {
      const stop = connectToHub({
        urls,
        hubName: name(),
        chainId: L2_CHAIN_ID,
        wallet: node.burner,
        signer: silent,
        licenses: () => [node.licenseId],
        logger: quiet,
        firstRetryMs: 5_000, // one attempt within the test
      });
      cleanups.push(stop);
    };
    nodeVia([await startRelay()]);
    await until("the relayed login refused", async () => (await hub.refused("wrong-url")) >= 1);
    const rewriting = await startRelay((frame) => frame.replace(/"url":"[^"]*"/, `"url":"${hub.url}"`));
    nodeVia([rewriting]);
    await until("the rewritten login refused", async () => (await hub.refused("auth")) >= 1);
    expect(hub.admitted).to.deep.equal([]);
    // The same node dialling the hub itself is admitted.
    nodeVia([hub.url]);
    await until("admitted directly", () => hub.admitted.includes(node.burner.address));
  });

  it("the node signs no challenge naming another hub, and moves on to its next URL, past one that is down", async function () {
    const hub = await startHub({});
    const [node] = l2.nodes;
    // A hub of another deployment (another AttestationVerifier): its challenge is genuine, for another name.
    const otherServer = createServer();
    const other = new WebSocketServer({ server: otherServer });
    const received: string[] = [];
    other.on("connection", (ws) => {
      ws.on("message", (data) => received.push(text(data)));
      ws.send(
        JSON.stringify({
          type: "challenge",
          hub: hubName("main", L2_CHAIN_ID, Wallet.createRandom().address),
          chainId: "900",
          nonce: `0x${"11".repeat(32)}`,
        }),
      );
    });
    const otherUrl = `ws://127.0.0.1:${await listen(otherServer)}${HUB_PATH}`;
    const downServer = createServer();
    const downUrl = `ws://127.0.0.1:${await listen(downServer)}${HUB_PATH}`;
    await new Promise((resolve) => downServer.close(resolve));
    cleanups.push(async () => {
      for (const client of other.clients) client.terminate();
      other.close();
      await new Promise((resolve) => otherServer.close(resolve));
    });
    let admitted = false;
    cleanups.push(
      connectToHub({
        urls: [downUrl, otherUrl, hub.url],
        hubName: name(),
        chainId: L2_CHAIN_ID,
        wallet: node.burner,
        signer: silent,
        licenses: () => [node.licenseId],
        logger: quiet,
        firstRetryMs: 50,
        maxRetryMs: 100,
        onAdmitted: (value) => (admitted ||= value),
      }),
    );
    await until("admitted by the third URL", () => admitted);
    expect(received).to.deep.equal([]);
  });

  describe("node configuration", function () {
    const base = () => ({
      OWNERS_ALLOWLIST: l2.nodes[0].owner.address,
      L2_RPC_URLS: "http://127.0.0.1:3",
      VERIFICATION_REGISTRY: l2.verificationRegistry,
      EVM_RPC_URLS: "http://127.0.0.1:1",
      SOLANA_RPC_URLS: "http://127.0.0.1:2",
      ATTESTATION_VERIFIER: l2.verifier,
    });

    it("refuses a ws:// hub outside loopback unless ATTESTATION_HUB_ALLOW_INSECURE=true", function () {
      expect(() => loadNodeConfig({ ...base(), ATTESTATION_HUB_URLS: "wss://hub.example/attest/ws,ws://hub.example/attest/ws" })).to.throw(
        /ATTESTATION_HUB_ALLOW_INSECURE/,
      );
      expect(() => loadNodeConfig({ ...base(), ATTESTATION_HUB_URL: "ws://10.1.2.3:8787/attest/ws" })).to.throw(/loopback/);
      const insecure = loadNodeConfig({
        ...base(),
        ATTESTATION_HUB_URLS: "ws://hub.example/attest/ws",
        ATTESTATION_HUB_ALLOW_INSECURE: "true",
      });
      expect(hubUrlsOf(insecure)).to.deep.equal(["ws://hub.example/attest/ws"]);
      const local = loadNodeConfig({ ...base(), ATTESTATION_HUB_URLS: "ws://127.0.0.1:8787/attest/ws, wss://hub.example/attest/ws" });
      expect(hubUrlsOf(local)).to.deep.equal(["ws://127.0.0.1:8787/attest/ws", "wss://hub.example/attest/ws"]);
      expect(hubUrlsOf(loadNodeConfig({ ...base(), ATTESTATION_HUB_URL: "ws://localhost:8787/attest/ws" }))).to.deep.equal([
        "ws://localhost:8787/attest/ws",
      ]);
      // The client refuses such a URL too, whoever builds it.
      const client = {
        hubName: name(),
        chainId: L2_CHAIN_ID,
        wallet: l2.nodes[0].burner,
        signer: silent,
        licenses: () => [1n],
        logger: quiet,
      };
      expect(() => connectToHub({ ...client, urls: ["ws://hub.example/attest/ws"] })).to.throw(/loopback/);
    });

    it("requires the hub name derived from the label, the L2 chain and the verifier, or the one configured", function () {
      const derived = loadNodeConfig({ ...base(), ATTESTATION_HUB_URLS: "wss://hub.example/attest/ws" });
      expect(expectedHubName(derived, L2_CHAIN_ID)).to.equal(name());
      const staging = loadNodeConfig({ ...base(), ATTESTATION_HUB_URLS: "wss://hub.example/attest/ws", ATTESTATION_HUB_LABEL: "staging" });
      expect(expectedHubName(staging, L2_CHAIN_ID)).to.equal(hubName("staging", L2_CHAIN_ID, l2.verifier));
      const named = loadNodeConfig({ ...base(), ATTESTATION_HUB_URLS: "wss://hub.example/attest/ws", ATTESTATION_HUB_NAME: "custom" });
      expect(expectedHubName(named, L2_CHAIN_ID)).to.equal("custom");
      expect(() =>
        loadNodeConfig({ ...base(), ATTESTATION_HUB_URLS: "wss://a.example/attest/ws", ATTESTATION_HUB_URL: "wss://b.example/attest/ws" }),
      ).to.throw(/not both/);
    });
  });
});

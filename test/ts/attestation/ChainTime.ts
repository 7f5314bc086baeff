import type { AttestationJson } from "@avn/protocol/attestation-kinds";
import { createServer, type Server } from "node:http";

import type { AddressInfo } from "node:net";

import { Writable } from "node:stream";

import { expect } from "chai";

import { pino, type Logger } from "pino";

import { WebSocket, WebSocketServer } from "ws";

import { L2HeadFollower } from "../../../src/api/attestation-hub/l2-head.ts";

import { startSourceFixtures, type SourceFixtures } from "../../../src/devnet/source-chains.ts";

import { l2HeadTimeReader } from "../../../src/node/hub-client.ts";

import { connectNode, honestSigner, L2_CHAIN_ID, startAttestationL2, startHubApi, until, type AttestationL2 } from "./fixture.ts";

/**
 * Chain time, not wall time: the hub follows the L2 head by subscription and pins `issuedAt` to its
 * timestamp; a node checks that issue time against its own view of the L2 head. Time jumps stay well
 * inside the registry's liveness window (10 minutes), so the test licenses stay live throughout.
 */
describe("chain time: the hub pins issuedAt to the L2 head, nodes check it against theirs", function () {
  this.timeout(60_000);
  let sources: SourceFixtures;
  let l2: AttestationL2;
  const cleanups: Array<() => Promise<void> | void> = [];

  before(async function () {
    [sources, l2] = await Promise.all([startSourceFixtures(), startAttestationL2()]);
  });
  afterEach(async function () {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  after(async function () {
    await l2?.stop();
    await sources?.stop();
  });

  const l2Rpc = async <T = string>(method: string, params: unknown[] = []): Promise<T> => {
    const response = await fetch(l2.anvil.rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    });
    const body = (await response.json()) as { result: T; error?: { message: string } };
    if (body.error !== undefined) throw new Error(`${method}: ${body.error.message}`);
    return body.result;
  };
  const latestL2 = async () => {
    const block = await l2Rpc<{ number: string; timestamp: string }>("eth_getBlockByNumber", ["latest", false]);
    return { number: BigInt(block.number), timestamp: BigInt(block.timestamp) };
  };
  /** Mines one L2 block, `jumpSeconds` after the head if given; returns it. */
  const mine = async (jumpSeconds?: bigint) => {
    if (jumpSeconds !== undefined) await l2Rpc("evm_setNextBlockTimestamp", [Number((await latestL2()).timestamp + jumpSeconds)]);
    await l2Rpc("evm_mine");
    return latestL2();
  };
  const nowSeconds = () => BigInt(Math.floor(Date.now() / 1000));
  const follow = (options: { wsUrl?: string; rpcUrl?: string; logger?: Logger } = {}) => {
    const follower = new L2HeadFollower({
      wsUrl: options.wsUrl ?? l2.anvil.wsUrl,
      rpcUrl: options.rpcUrl ?? l2.anvil.rpcUrl,
      chainId: L2_CHAIN_ID,
      logger: options.logger ?? pino({ level: "silent" }),
      firstRetryMs: 50,
      maxRetryMs: 200,
    });
    cleanups.push(() => follower.stop());
    return follower;
  };

  it("follows the L2 head by subscription: a mined block, then one far ahead of the wall clock", async function () {
    const follower = follow();
    await follower.start();
    // Right after start, from the first read and before any notification.
    expect(await follower.issuedAt()).to.equal((await latestL2()).timestamp);
    await until("the subscription live", () => follower.following);

    const mined = await mine();
    await until(`head ${mined.number} seen`, () => follower.head?.number === mined.number);
    expect(await follower.issuedAt()).to.equal(mined.timestamp);

    const ahead = await mine(120n);
    expect(ahead.timestamp).to.be.greaterThan(nowSeconds() + 60n);
    await until(`head ${ahead.number} seen`, () => follower.head?.timestamp === ahead.timestamp);
    expect(follower.following).to.equal(true); // from the notification, not from a read
    expect(await follower.issuedAt()).to.equal(ahead.timestamp);
  });

  it("pins an attested answer requested after a block is mined to at least that block's time, the L2 head's", async function () {
    const hubApi = await startHubApi(sources, l2, l2.verifier);
    cleanups.push(() => hubApi.api.close());
    for (const node of l2.nodes.slice(0, 2)) cleanups.push(connectNode(hubApi.hubUrl, node, honestSigner(sources, node, l2.verifier)));
    await until("two nodes admitted", () => hubApi.hub.stats.list().filter((node) => node.connected).length === 2);

    const mined = await mine(90n);
    expect(mined.timestamp).to.be.greaterThan(nowSeconds() + 30n); // well off the wall clock
    const response = await fetch(`${hubApi.api.baseUrl}/api/ccq-evm?attest=true`, {
      method: "POST",
      headers: { authorization: hubApi.api.apiKey, "content-type": "application/json" },
      body: JSON.stringify({ user_address: sources.evm.holder, contract_address: sources.evm.erc20 }),
    });
    expect(response.status).to.equal(200);
    const { attestation } = ((await response.json()) as { data: { attestation: AttestationJson } }).data;
    const issuedAt = BigInt(attestation.message.issuedAt);
    expect(issuedAt).to.be.at.least(mined.timestamp);
    expect(issuedAt).to.equal((await latestL2()).timestamp);
    expect(attestation.signatures.flatMap((signature) => signature.licenseIds)).to.have.length.of.at.least(2);
  });

  it("reads the head over HTTP (one request for concurrent callers) while the socket is down, then subscribes again", async function () {
    const proxy = await startWsProxy(l2.anvil.wsUrl);
    cleanups.push(() => proxy.close());
    const http = await startCountingHttpProxy(l2.anvil.rpcUrl);
    cleanups.push(() => http.close());
    const lines: Array<{ level: number; msg: string }> = [];
    const logged: string[] = [];
    const logger = pino(
      { level: "info" },
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          logged.push(chunk.toString());
          lines.push(JSON.parse(chunk.toString()) as { level: number; msg: string });
          done();
        },
      }),
    );
    // The URLs carry a key in their path, as hosted RPC URLs do.
    const follower = follow({ wsUrl: `${proxy.url}/v2/SECRET-KEY`, rpcUrl: `${http.url}/v2/SECRET-KEY`, logger });
    await follower.start();
    await until("the subscription live", () => follower.following);
    expect(proxy.connections()).to.equal(1);

    proxy.down();
    await until("the outage noticed", () => !follower.following);
    const whileDown = await mine(30n);
    const readsBefore = http.blockReads();
    const answers = await Promise.all(Array.from({ length: 5 }, () => follower.issuedAt()));
    expect(answers).to.deep.equal(Array.from({ length: 5 }, () => whileDown.timestamp));
    expect(http.blockReads() - readsBefore).to.equal(1);
    // Several refused reconnects while down (50 ms doubling to 200 ms): one warning for the outage.
    const refusedBefore = proxy.refused();
    await until("two reconnects refused", () => proxy.refused() >= refusedBefore + 2);
    expect(lines.filter((line) => line.level === 40)).to.have.length(1);

    proxy.up();
    await until("subscribed again", () => follower.following && proxy.connections() === 2);
    const after = await mine();
    const readsAfter = http.blockReads();
    await until(`head ${after.number} seen`, () => follower.head?.number === after.number);
    expect(await follower.issuedAt()).to.equal(after.timestamp);
    expect(http.blockReads()).to.equal(readsAfter); // followed by notification, not read
    expect(lines.map((line) => line.msg)).to.include("following the L2 head again");
    expect(logged.join("")).to.not.include("SECRET");
  });

  it("has a node refuse an issue time further than its tolerance from its own L2 head, and sign one within it", async function () {
    const node = l2.nodes[0];
    const signer = honestSigner(sources, node, l2.verifier, undefined, { maxClockSkewSeconds: 10 });
    const head = (await latestL2()).timestamp;
    const sourceBlock = BigInt(
      await (
        await fetch(sources.anvil.rpcUrl, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] }),
        })
      )
        .json()
        .then((body) => (body as { result: string }).result),
    );
    const answer = (offset: bigint) =>
      signer.answer({
        type: "attest",
        id: `at${offset}`,
        chain: 0,
        owner: sources.evm.holder,
        asset: sources.evm.erc20,
        sourceBlock: sourceBlock.toString(),
        issuedAt: (head + offset).toString(),
      });
    // Behind by the tolerance, or ahead by at most the verifier's MAX_CLOCK_SKEW (4 s): a hub cannot stamp
    // an answer fresher than what the verifier's views accept.
    for (const offset of [-10n, 0n, 4n]) expect((await answer(offset)).type, `offset ${offset}`).to.equal("attestation");
    for (const offset of [-11n, 5n, 10n, 3_600n]) {
      const reply = await answer(offset);
      expect(reply.type, `offset ${offset}`).to.equal("refusal");
      if (reply.type === "refusal")
        expect(reply.reason).to.equal(
          `issue time ${head + offset} is ${offset} s off this node's L2 head (${head}): at most 4 s ahead, 10 s behind`,
        );
    }
  });

  it("reads the node's L2 head time once for a burst of requests and reuses it about a second", async function () {
    let reads = 0;
    const provider = l2.ethers.provider;
    const headTime = l2HeadTimeReader(() => ({
      getBlock: (tag: Parameters<typeof provider.getBlock>[0]) => {
        reads += 1;
        return provider.getBlock(tag);
      },
    }));
    const times = await Promise.all(Array.from({ length: 10 }, () => headTime()));
    expect(new Set(times)).to.deep.equal(new Set([(await latestL2()).timestamp]));
    expect(await headTime()).to.equal(times[0]); // within the second: reused
    expect(reads).to.equal(1);
  });
});

/** A WebSocket proxy to `upstream` that the test can take down (open sockets closed, new ones refused) and bring back. */
async function startWsProxy(upstream: string) {
  let isDown = false;
  let connections = 0;
  let refused = 0;
  const server = new WebSocketServer({
    port: 0,
    host: "127.0.0.1",
    verifyClient: (_info, callback) => {
      if (isDown) refused += 1;
      callback(!isDown, 503);
    },
  });
  await new Promise<void>((resolve) => server.once("listening", resolve));
  server.on("connection", (client) => {
    connections += 1;
    const backend = new WebSocket(upstream);
    // The proxy's sockets use the default binary type: every message is one Buffer, forwarded as it came.
    const queued: Array<[Buffer, boolean]> = [];
    backend.on("open", () => {
      for (const [data, binary] of queued.splice(0)) backend.send(data, { binary });
    });
    client.on("message", (data, binary) => {
      if (backend.readyState === WebSocket.OPEN) backend.send(data as Buffer, { binary });
      else queued.push([data as Buffer, binary]);
    });
    backend.on("message", (data, binary) => client.readyState === WebSocket.OPEN && client.send(data as Buffer, { binary }));
    client.on("close", () => backend.terminate());
    backend.on("close", () => client.terminate());
    client.on("error", () => undefined);
    backend.on("error", () => undefined);
  });
  return {
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: () => connections,
    refused: () => refused,
    down() {
      isDown = true;
      for (const client of server.clients) client.terminate();
    },
    up() {
      isDown = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of server.clients) client.terminate();
        server.close(() => resolve());
      }),
  };
}

/** An HTTP JSON-RPC proxy to `upstream` that counts the `eth_getBlockByNumber` requests it forwards. */
async function startCountingHttpProxy(upstream: string) {
  let blockReads = 0;
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const body = Buffer.concat(chunks).toString();
      blockReads += (body.match(/"eth_getBlockByNumber"/g) ?? []).length;
      void fetch(upstream, { method: "POST", headers: { "content-type": "application/json" }, body })
        .then(async (answer) => response.writeHead(answer.status, { "content-type": "application/json" }).end(await answer.text()))
        .catch(() => response.writeHead(502).end());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    blockReads: () => blockReads,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

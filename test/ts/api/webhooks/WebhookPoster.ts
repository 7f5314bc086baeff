import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";

import { expect } from "chai";

import { postWebhook, type WebhookPostRequest } from "../../../../src/api/webhooks/webhook-poster.ts";
import type { WebhookHostLookup } from "../../../../src/api/webhooks/url-guard.ts";

interface Received {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

interface TestServer {
  port: number;
  /** Every request that reached the server, body read in full. */
  received: Received[];
  close(): Promise<void>;
}

/** A real HTTP server on `host` (port 0) that records each request, then lets `answer` respond. */
async function startServer(answer: (response: http.ServerResponse) => void, host = "127.0.0.1"): Promise<TestServer> {
  const received: Received[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      received.push({
        method: request.method ?? "",
        path: request.url ?? "",
        headers: request.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      });
      answer(response);
    });
  });
  server.listen(0, host);
  await once(server, "listening");
  return {
    port: (server.address() as AddressInfo).port,
    received,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const answerWith =
  (status: number, body = "", headers: http.OutgoingHttpHeaders = {}) =>
  (response: http.ServerResponse) =>
    response.writeHead(status, headers).end(body);

const post = (url: string, overrides: Partial<WebhookPostRequest> = {}) =>
  postWebhook({ url: new URL(url), body: "{}", headers: {}, allowPrivate: true, ...overrides });

const PRIVATE = /url resolves to a private, loopback or link-local address/;

describe("webhook deliveries: one bounded POST", function () {
  this.timeout(20_000);

  const servers: TestServer[] = [];
  const serve = async (...args: Parameters<typeof startServer>) => {
    const server = await startServer(...args);
    servers.push(server);
    return server;
  };
  afterEach(async function () {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });

  it("POSTs the exact body and headers once, and reports a 2xx as ok with the status and the answer", async function () {
    const server = await serve(answerWith(202, "thanks"));
    const body = JSON.stringify({ id: "evt_1", type: "verification.completed", note: "café ✓" });
    const outcome = await post(`http://127.0.0.1:${server.port}/hooks/avn?token=abc`, {
      body,
      headers: { "Avn-Signature": "t=1,v1=00", "Avn-Event-Id": "evt_1" },
    });
    expect(outcome).to.include({ ok: true, status: 202, responseBody: "thanks" });
    expect(outcome.error).to.equal(undefined);
    expect(outcome.latencyMs).to.be.a("number").and.at.least(0);
    expect(server.received).to.have.length(1);
    const [request] = server.received;
    expect(request).to.include({ method: "POST", path: "/hooks/avn?token=abc", body });
    expect(request.headers).to.include({
      "content-type": "application/json",
      "user-agent": "avn-webhooks/1",
      "content-length": String(Buffer.byteLength(body, "utf8")),
      "avn-signature": "t=1,v1=00",
      "avn-event-id": "evt_1",
      host: `127.0.0.1:${server.port}`,
    });
  });

  it("reports a 500 as not ok, with its status and its answer", async function () {
    const server = await serve(answerWith(500, "boom"));
    const outcome = await post(`http://127.0.0.1:${server.port}/`);
    expect(outcome).to.include({ ok: false, status: 500, responseBody: "boom" });
    expect(server.received).to.have.length(1);
  });

  it("test_RevertWhen_PrivateDestination: 127.0.0.1, 10.x, [::1], localhost, 169.254.169.254 and a name resolving to 10.x never get a request", async function () {
    const loopback = await serve(answerWith(200, "ok"));
    // A server on ::1 as well (when the host has IPv6), so that a guard letting [::1] through would be seen.
    const loopback6 = await serve(answerWith(200, "ok"), "::1").catch(() => undefined);
    const asked: string[] = [];
    const lookup: WebhookHostLookup = async (hostname) => {
      asked.push(hostname);
      return ["10.1.2.3"];
    };
    const refused = [
      `http://127.0.0.1:${loopback.port}/`,
      "http://10.0.0.1/",
      `http://[::1]:${loopback6?.port ?? loopback.port}/`,
      `http://localhost:${loopback.port}/`, // the system resolver's own answer: loopback
      "http://169.254.169.254/latest/meta-data/",
      `http://[::ffff:127.0.0.1]:${loopback.port}/`,
    ];
    for (const url of refused) {
      const outcome = await post(url, { allowPrivate: false, timeoutMs: 2_000 });
      expect(outcome.ok, url).to.equal(false);
      expect(outcome.status, url).to.equal(undefined);
      expect(outcome.error, url).to.match(PRIVATE);
    }
    const viaName = await post("http://evil.example/", { allowPrivate: false, lookup, timeoutMs: 2_000 });
    expect(viaName).to.include({ ok: false });
    expect(viaName.error).to.match(PRIVATE);
    expect(asked).to.deep.equal(["evil.example"]);
    // The marker that the servers were there to receive: allowed, the same request arrives, and it is the first.
    expect((await post(`http://127.0.0.1:${loopback.port}/`)).ok).to.equal(true);
    expect(loopback.received).to.have.length(1);
    if (loopback6 !== undefined) {
      expect((await post(`http://[::1]:${loopback6.port}/`)).ok).to.equal(true);
      expect(loopback6.received).to.have.length(1);
    }
  });

  it("connects to the address its lookup checked, and sends the URL's name as Host", async function () {
    const server = await serve(answerWith(204));
    const asked: string[] = [];
    const lookup: WebhookHostLookup = async (hostname) => {
      asked.push(hostname);
      return ["127.0.0.1"];
    };
    const outcome = await post(`http://hooks.test:${server.port}/x`, { lookup });
    expect(outcome).to.include({ ok: true, status: 204 });
    expect(asked).to.deep.equal(["hooks.test"]);
    expect(server.received.map((request) => request.headers.host)).to.deep.equal([`hooks.test:${server.port}`]);
  });

  it("test_RevertWhen_Redirect: a 302 to another local server is not followed", async function () {
    const target = await serve(answerWith(200, "reached"));
    const redirecting = await serve(answerWith(302, "", { location: `http://127.0.0.1:${target.port}/` }));
    const outcome = await post(`http://127.0.0.1:${redirecting.port}/`);
    expect(outcome).to.include({ ok: false, status: 302, error: "redirect not followed (302)" });
    expect(redirecting.received).to.have.length(1);
    // Marker: the target does receive what is sent to it directly; it had received nothing before.
    expect(target.received).to.have.length(0);
    expect((await post(`http://127.0.0.1:${target.port}/`)).ok).to.equal(true);
    expect(target.received).to.have.length(1);
  });

  it("test_RevertWhen_NoAnswer: times out, and closes the connection", async function () {
    let serverSide: http.ServerResponse | undefined;
    const silent = await serve((response) => (serverSide = response)); // accepts, reads, never answers
    const outcome = await post(`http://127.0.0.1:${silent.port}/`, { timeoutMs: 300 });
    expect(outcome).to.include({ ok: false, error: "timed out after 300 ms" });
    expect(outcome.latencyMs).to.be.at.least(290);
    expect(silent.received).to.have.length(1);
    expect(serverSide, "the server got the request").to.not.equal(undefined);
    if (!serverSide!.destroyed) await once(serverSide!, "close"); // the client closed the connection
  });

  it("test_RevertWhen_BodyNeverEnds: the timeout bounds the body too, not only the headers", async function () {
    const trickle = await serve((response) => {
      response.writeHead(200);
      response.write("partial");
    });
    const outcome = await post(`http://127.0.0.1:${trickle.port}/`, { timeoutMs: 300 });
    expect(outcome).to.include({ ok: false, status: 200, error: "timed out after 300 ms" });
  });

  it("keeps 1 KiB of an endless answer and stops reading there, well before the timeout", async function () {
    let written = 0;
    let closed: Promise<unknown> | undefined;
    const flood = await serve((response) => {
      closed = once(response, "close");
      response.writeHead(200, { "content-type": "text/plain" });
      const chunk = Buffer.alloc(64 * 1024, "x");
      const pump = () => {
        while (!response.destroyed && response.write(chunk)) written += chunk.length;
        if (!response.destroyed) response.once("drain", pump);
      };
      pump();
    });
    const outcome = await post(`http://127.0.0.1:${flood.port}/`, { timeoutMs: 10_000 });
    expect(outcome).to.include({ ok: true, status: 200, responseBody: "x".repeat(1024) });
    expect(outcome.error).to.equal(undefined);
    await closed; // the server sees the connection go: the client stopped reading, it did not drain
    expect(written).to.be.below(64 * 1024 * 1024);
  });

  it("never throws: refused connections and bad headers are outcomes, and no error text holds the URL's path or query", async function () {
    const gone = await startServer(answerWith(200));
    await gone.close(); // a port nobody listens on
    const refused = await post(`http://127.0.0.1:${gone.port}/hooks/s3cr3t-path?token=s3cr3t`);
    expect(refused.ok).to.equal(false);
    expect(refused.error).to.include("ECONNREFUSED").and.include(`127.0.0.1:${gone.port}`);
    expect(refused.error).to.not.match(/s3cr3t/);

    const unresolved = await post("https://nowhere.example/?token=s3cr3t", { lookup: async () => [] });
    expect(unresolved).to.include({ ok: false });
    expect(unresolved.error)
      .to.include("url's host does not resolve")
      .and.not.match(/s3cr3t/);

    const server = await serve(answerWith(200));
    const badHeader = await post(`http://127.0.0.1:${server.port}/?token=s3cr3t`, { headers: { "X-Bad": "a\r\nInjected: 1" } });
    expect(badHeader.ok).to.equal(false);
    expect(badHeader.error)
      .to.be.a("string")
      .and.not.match(/s3cr3t/);
    expect(server.received).to.have.length(0);
  });
});

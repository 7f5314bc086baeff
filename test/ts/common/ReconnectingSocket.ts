import { once } from "node:events";
import type { AddressInfo } from "node:net";

import { expect } from "chai";
import { WebSocketServer, type WebSocket } from "ws";

import { freePort } from "../../../src/common/free-port.ts";
import { ReconnectingSocket, type SocketClosed, type SocketConnection } from "../../../src/common/reconnecting-socket.ts";

/** A real WebSocket server on a free port; `connected` resolves with each next connection, in order. */
async function startServer(options: { autoPong?: boolean } = {}) {
  const server = new WebSocketServer({ host: "127.0.0.1", port: 0, autoPong: options.autoPong ?? true });
  await once(server, "listening");
  const sockets: WebSocket[] = [];
  const waiting: Array<(socket: WebSocket) => void> = [];
  server.on("connection", (socket) => {
    sockets.push(socket);
    socket.on("message", (data) => socket.send(`echo ${(data as Buffer).toString("utf8")}`)); // one frame: a Buffer
    waiting.shift()?.(socket);
  });
  return {
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`,
    sockets,
    /** The next connection the server accepts. */
    nextConnection: () => new Promise<WebSocket>((resolve) => waiting.push(resolve)),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A client whose callbacks are queues the test awaits, one event at a time. */
function client(urls: string[], options: { pingMs?: number; reconnect?: boolean } = {}) {
  const opened: SocketConnection[] = [];
  const closed: SocketClosed[] = [];
  const messages: string[] = [];
  const waiters: Array<() => void> = [];
  const changed = () => waiters.splice(0).forEach((wake) => wake());
  const socket = new ReconnectingSocket({
    urls,
    firstRetryMs: 20,
    maxRetryMs: 80,
    ...options,
    onOpen: (connection) => {
      opened.push(connection);
      changed();
    },
    onMessage: (text) => {
      messages.push(text);
      changed();
    },
    onClose: (event) => {
      closed.push(event);
      changed();
    },
  });
  /** Resolves once `check` holds, re-checked at each event of the client. */
  const until = async (check: () => boolean) => {
    while (!check()) await new Promise<void>((resolve) => waiters.push(resolve));
  };
  return { socket, opened, closed, messages, until };
}

describe("ReconnectingSocket: the services' one WebSocket client and backoff", function () {
  const stops: Array<() => unknown> = [];
  afterEach(async function () {
    for (const stop of stops.splice(0).reverse()) await stop();
  });

  it("tries its URLs in turn, doubling the wait after each failure up to the cap, and sends and receives JSON text", async function () {
    const server = await startServer();
    stops.push(server.close);
    const refused = `ws://127.0.0.1:${await freePort()}`; // nothing listens there
    const { socket, opened, closed, messages, until } = client([refused, refused, refused, refused, server.url]);
    stops.push(() => socket.stop());
    socket.start();
    await until(() => opened.length === 1);
    expect(closed.map((event) => [event.url, event.retryInMs])).to.deep.equal([
      [refused, 20],
      [refused, 40],
      [refused, 80],
      [refused, 80],
    ]);
    expect(opened[0].url).to.equal(server.url);
    expect(opened[0].send({ hello: 1 })).to.equal(true);
    await until(() => messages.length === 1);
    expect(messages).to.deep.equal(['echo {"hello":1}']);
  });

  it("reconnects when the other side closes, from the first delay again once the caller says the connection was good", async function () {
    const server = await startServer();
    stops.push(server.close);
    const { socket, opened, closed, until } = client([server.url]);
    stops.push(() => socket.stop());
    const first = server.nextConnection();
    socket.start();
    (await first).close(4000, "go away");
    await until(() => opened.length === 2);
    expect(closed.map(({ code, reason, retryInMs }) => ({ code, reason, retryInMs }))).to.deep.equal([
      { code: 4000, reason: "go away", retryInMs: 20 },
    ]);
    // Not told it was good: the next outage waits twice as long; told so, the shortest wait again.
    server.sockets[1].close(4000);
    await until(() => opened.length === 3);
    expect(closed[1].retryInMs).to.equal(40);
    socket.healthy();
    server.sockets[2].close(4000);
    await until(() => opened.length === 4);
    expect(closed[2].retryInMs).to.equal(20);
  });

  it("drops a connection whose other side answers no ping (half-open), and opens another", async function () {
    const server = await startServer({ autoPong: false });
    stops.push(server.close);
    const { socket, opened, closed, until } = client([server.url], { pingMs: 30 });
    stops.push(() => socket.stop());
    socket.start();
    await until(() => opened.length === 2);
    expect(closed[0].code).to.equal(1006); // terminated by the client: no closing handshake
  });

  it("ends a connection whose message its reader cannot handle, or that is too large, and opens another: never the process", async function () {
    const server = await startServer();
    stops.push(server.close);
    const opened: SocketConnection[] = [];
    const closed: SocketClosed[] = [];
    const waiters: Array<() => void> = [];
    const changed = () => waiters.splice(0).forEach((wake) => wake());
    const socket = new ReconnectingSocket({
      urls: [server.url],
      firstRetryMs: 20,
      maxPayloadBytes: 64,
      onOpen: (connection) => {
        opened.push(connection);
        changed();
      },
      // A reader that trusts what it gets: `null` has no `type`.
      onMessage: (text) => void (JSON.parse(text) as { type: string }).type,
      onClose: (event) => {
        closed.push(event);
        changed();
      },
    });
    stops.push(() => socket.stop());
    const until = async (check: () => boolean) => {
      while (!check()) await new Promise<void>((resolve) => waiters.push(resolve));
    };
    const first = server.nextConnection();
    socket.start();
    (await first).send("null");
    await until(() => opened.length === 2);
    expect(closed[0]).to.include({ code: 1011, reason: "unreadable message" });
    server.sockets[1].send("x".repeat(65));
    await until(() => opened.length === 3);
    // Too big: ws drops the connection as it arrives (told 1009), before reading it; no closing handshake here.
    expect(closed[1].code).to.equal(1006);
  });

  it("without reconnect, tells of the end once and tries no more; stopped, tells nothing", async function () {
    const server = await startServer();
    stops.push(server.close);
    const once_ = client([server.url], { reconnect: false });
    stops.push(() => once_.socket.stop());
    const first = server.nextConnection();
    once_.socket.start();
    (await first).close(4000);
    await once_.until(() => once_.closed.length === 1);
    expect(once_.closed[0].retryInMs).to.equal(undefined);

    const stopped = client([server.url]);
    const second = server.nextConnection();
    stopped.socket.start();
    const connection = await second;
    await stopped.until(() => stopped.opened.length === 1);
    stopped.socket.stop();
    await once(connection, "close");
    expect(stopped.closed).to.deep.equal([]);
    expect(stopped.opened[0].send({ late: true })).to.equal(false);
  });
});

import { WebSocket, type RawData } from "ws";

/**
 * The one backoff of every WebSocket the services keep open (the hub's L2 heads, the node's hub connection
 * and its new-job wake-up, the devnet's head followers): the first retry after half a second, doubling to
 * 30 s, and back to the first once the caller says the connection proved good (`healthy`).
 */
export const RECONNECT_BACKOFF = { firstMs: 500, maxMs: 30_000 } as const;
/** How long an opening handshake may take before the attempt counts as failed. */
const HANDSHAKE_TIMEOUT_MS = 5_000;
/** The largest message accepted by default: a JSON-RPC notification is a few kB (the other side is not trusted). */
const DEFAULT_MAX_PAYLOAD_BYTES = 1024 * 1024;

/** One open connection, as the callbacks see it. */
export interface SocketConnection {
  readonly url: string;
  /** Sends `message` as JSON text; false when the connection is no longer open. */
  send(message: unknown): boolean;
  /** Ends this connection (the next attempt follows, unless the socket was stopped). */
  close(code?: number, reason?: string): void;
}

/** Why and when a connection ended: `retryInMs` is undefined when no attempt follows. */
export interface SocketClosed {
  url: string;
  code: number;
  reason: string;
  retryInMs: number | undefined;
}

export interface ReconnectingSocketOptions {
  /** The URLs, tried in turn: each attempt takes the next. */
  urls: readonly string[];
  /** The connection is open: subscribe, or wait for the other side's first message. */
  onOpen?(connection: SocketConnection): void;
  /** A text frame of the connection (binary frames are read as UTF-8). */
  onMessage(text: string, connection: SocketConnection): void;
  /** A connection ended, or an attempt failed to open; called once per attempt, before the wait. */
  onClose?(closed: SocketClosed): void;
  /** Pings the other side this often, and drops a connection that answered none since (a half-open TCP one). */
  pingMs?: number;
  /** A larger message closes the connection (1009) before it is read: 1 MiB unless the protocol says less. */
  maxPayloadBytes?: number;
  /** False: no attempt after the first connection ends (the devnet's chains, whose end is final). */
  reconnect?: boolean;
  /** The backoff's bounds (tests shorten them); RECONNECT_BACKOFF otherwise. */
  firstRetryMs?: number;
  maxRetryMs?: number;
}

/**
 * A WebSocket client that reconnects for as long as it runs, with RECONNECT_BACKOFF, trying its URLs in
 * turn. A failure of the socket is an event, never an uncaught exception. The callers keep their
 * protocols (a JSON-RPC subscription, the hub's login) and tell it when a connection proved good.
 */
export class ReconnectingSocket {
  readonly #options: ReconnectingSocketOptions;
  readonly #firstRetryMs: number;
  #retryMs: number;
  #next = 0;
  #socket: WebSocket | undefined;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(options: ReconnectingSocketOptions) {
    if (options.urls.length === 0) throw new Error("no WebSocket URL");
    this.#options = options;
    this.#firstRetryMs = options.firstRetryMs ?? RECONNECT_BACKOFF.firstMs;
    this.#retryMs = this.#firstRetryMs;
  }

  /** Opens the first connection. */
  start(): void {
    this.#connect();
  }

  /** The connection proved good (subscribed, admitted): the next outage's first retry is the shortest again. */
  healthy(): void {
    this.#retryMs = this.#firstRetryMs;
  }

  /**
   * Stops reconnecting and ends the connection: an open one with a normal closure (1000), so the other side
   * sees a goodbye rather than a drop; one still opening at once. `onClose` is not called for it. Idempotent.
   */
  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    if (this.#socket?.readyState === WebSocket.OPEN) this.#socket.close(1000);
    else this.#socket?.terminate();
    this.#socket = undefined;
  }

  #connect(): void {
    if (this.#stopped) return;
    const { urls } = this.#options;
    const url = urls[this.#next];
    this.#next = (this.#next + 1) % urls.length;
    const socket = new WebSocket(url, {
      handshakeTimeout: HANDSHAKE_TIMEOUT_MS,
      maxPayload: this.#options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES,
    });
    this.#socket = socket;
    const connection: SocketConnection = {
      url,
      send: (message) => {
        if (socket.readyState !== WebSocket.OPEN) return false;
        socket.send(JSON.stringify(message));
        return true;
      },
      close: (code, reason) => socket.close(code, reason),
    };
    let alive = true;
    let ping: NodeJS.Timeout | undefined;
    socket.on("error", () => undefined); // followed by "close", handled there
    socket.on("pong", () => (alive = true));
    socket.on("open", () => {
      if (this.#options.pingMs !== undefined) {
        ping = setInterval(() => {
          if (!alive) return socket.terminate();
          alive = false;
          socket.ping();
        }, this.#options.pingMs);
        ping.unref();
      }
      this.#options.onOpen?.(connection);
    });
    socket.on("message", (data) => {
      // A frame that arrives while a stopped connection closes is for nobody.
      if (this.#socket !== socket) return;
      try {
        this.#options.onMessage(textOf(data), connection);
      } catch {
        // The other side is not trusted: a frame its reader cannot handle ends this connection, never the
        // process (ws calls this listener from the socket's own event, where a throw would be uncaught).
        socket.close(1011, "unreadable message");
      }
    });
    socket.on("close", (code, reason) => {
      clearInterval(ping);
      if (this.#socket !== socket || this.#stopped) return;
      this.#socket = undefined;
      const retry = this.#options.reconnect !== false;
      this.#options.onClose?.({ url, code, reason: reason.toString("utf8"), retryInMs: retry ? this.#retryMs : undefined });
      if (!retry) return;
      this.#timer = setTimeout(() => this.#connect(), this.#retryMs);
      this.#timer.unref();
      this.#retryMs = Math.min(this.#options.maxRetryMs ?? RECONNECT_BACKOFF.maxMs, this.#retryMs * 2);
    });
  }
}

function textOf(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString("utf8");
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString("utf8");
  return data.toString("utf8");
}

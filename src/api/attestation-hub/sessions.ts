import { randomBytes } from "node:crypto";
import type { IncomingMessage, Server } from "node:http";
import type { Duplex } from "node:stream";

import { getAddress } from "ethers";
import type { Logger } from "pino";
import { WebSocketServer, type RawData, type WebSocket } from "ws";

import type { ApiMetrics } from "../metrics.ts";
import type { LicenseChecker } from "./license-checker.ts";
import type { NodeStats } from "./node-stats.ts";
import { challengeSigner, CLOSE_CODE, HUB_PATH, parseNodeMessage, type HubMessage, type NodeMessage } from "../../common/hub-protocol.ts";
import { failureFields } from "../failure-log.ts";

/** An admitted node: its burner proved by the challenge, with at least one live license. */
export interface NodeSession {
  burner: string;
  /** Live licenses delegated to the burner, as of the last check. */
  licenseIds: bigint[];
  send(message: HubMessage): void;
}

export interface SessionsOptions {
  hubName: string;
  chainId: bigint;
  checker: LicenseChecker;
  stats: NodeStats;
  metrics: ApiMetrics;
  logger: Logger;
  /** How often every admitted burner's licenses are read again. */
  recheckMs: number;
  /** How long a node has to answer the challenge. */
  challengeTimeoutMs?: number;
  onAnswer: (session: NodeSession, message: Extract<NodeMessage, { type: "attestation" | "refusal" }>) => void;
}

const MAX_FRAME_BYTES = 16 * 1024;
const PING_MS = 15_000;

/**
 * The hub's WebSocket endpoint (`/attest/ws` on the API's HTTP server) and its admitted nodes. A node
 * gets a challenge with a fresh 32-byte nonce and must answer with its burner's signature of
 * `challengeText`; the burner must then operate at least one live license. Each session is checked again
 * every `recheckMs` and dropped (close 4410) once its licenses are gone: transferred, undelegated or no
 * longer heart-beating. One session per burner: a new login replaces the old connection.
 */
export class HubSessions {
  readonly #options: SessionsOptions;
  readonly #wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES });
  readonly #sessions = new Map<string, NodeSession & { socket: WebSocket }>();
  readonly #timers: NodeJS.Timeout[] = [];
  /** Whether each connection answered the last ping. */
  readonly #alive = new WeakMap<WebSocket, boolean>();

  constructor(options: SessionsOptions) {
    this.#options = options;
    this.#timers.push(setInterval(() => void this.recheck(), options.recheckMs));
    this.#timers.push(setInterval(() => this.#ping(), PING_MS));
    for (const timer of this.#timers) timer.unref();
  }

  /** Takes over WebSocket upgrades on `HUB_PATH`; other upgrade requests are refused. */
  attach(server: Server): void {
    server.on("upgrade", (request: IncomingMessage, socket: Duplex, head: Buffer) => {
      if (new URL(request.url ?? "/", "http://hub").pathname !== HUB_PATH) {
        socket.end("HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n");
        return;
      }
      this.#wss.handleUpgrade(request, socket, head, (ws) => this.#accept(ws));
    });
  }

  /** The admitted sessions now. */
  list(): NodeSession[] {
    return [...this.#sessions.values()];
  }

  /** Reads every admitted burner's licenses again; drops those left with none. */
  async recheck(): Promise<void> {
    await Promise.all(
      [...this.#sessions.values()].map(async (session) => {
        try {
          const licenseIds = await this.#options.checker.liveLicensesOf(session.burner);
          if (this.#sessions.get(session.burner) !== session) return;
          this.#options.checker.forget(session.licenseIds);
          if (licenseIds.length === 0)
            return this.#drop(session, CLOSE_CODE.licensesLost, "no live license is delegated to this burner any more");
          session.licenseIds = licenseIds;
          this.#options.stats.licenses(session.burner, licenseIds);
        } catch (error) {
          // The L2 RPC failed: keep the session (signatures are still checked before they count).
          this.#options.logger.warn({ burner: session.burner, failure: failureFields(error) }, "license re-check failed");
        }
      }),
    );
  }

  /** Closes every connection (the API is stopping). */
  async close(): Promise<void> {
    for (const timer of this.#timers) clearInterval(timer);
    for (const client of this.#wss.clients) client.close(CLOSE_CODE.shuttingDown, "the API is stopping");
    await new Promise<void>((resolve) => this.#wss.close(() => resolve()));
    for (const client of this.#wss.clients) client.terminate();
  }

  #accept(ws: WebSocket): void {
    const { hubName, chainId, checker, stats, metrics } = this.#options;
    const nonce = `0x${randomBytes(32).toString("hex")}`;
    let session: (NodeSession & { socket: WebSocket }) | undefined;
    this.#alive.set(ws, true);
    const refuse = (code: number, reason: string, label: string) => {
      metrics.attestationRefusedConnections.inc({ reason: label });
      ws.close(code, reason);
    };
    const timer = setTimeout(
      () => session === undefined && refuse(CLOSE_CODE.authFailed, "no answer to the challenge", "auth"),
      this.#options.challengeTimeoutMs ?? 10_000,
    );
    ws.on("pong", () => this.#alive.set(ws, true));
    ws.on("close", () => {
      clearTimeout(timer);
      if (session !== undefined && this.#sessions.get(session.burner) === session) {
        this.#sessions.delete(session.burner);
        stats.disconnected(session.burner);
        metrics.attestationNodes.set(this.#sessions.size);
      }
    });
    ws.on("error", () => undefined); // followed by "close"
    let helloSeen = false;
    ws.on("message", (data, isBinary) => {
      const message = isBinary ? undefined : parseNodeMessage(textOf(data));
      if (message === undefined) return refuse(CLOSE_CODE.protocol, "malformed message", "protocol");
      if (session !== undefined) {
        if (message.type === "hello") return refuse(CLOSE_CODE.protocol, "already logged in", "protocol");
        return this.#options.onAnswer(session, message);
      }
      if (message.type !== "hello" || helloSeen) return refuse(CLOSE_CODE.protocol, "expected the challenge answer", "protocol");
      helloSeen = true;
      const signer = challengeSigner(hubName, chainId.toString(), nonce, message.signature);
      if (signer === undefined || signer !== getAddress(message.burner))
        return refuse(CLOSE_CODE.authFailed, "challenge answer refused", "auth");
      void checker.liveLicensesOf(signer).then(
        (licenseIds) => {
          if (ws.readyState !== ws.OPEN) return;
          if (licenseIds.length === 0) return refuse(CLOSE_CODE.notOperator, "this burner operates no live license", "not-operator");
          clearTimeout(timer);
          session = { burner: signer, licenseIds, socket: ws, send: (out) => ws.readyState === ws.OPEN && ws.send(JSON.stringify(out)) };
          const previous = this.#sessions.get(signer);
          if (previous !== undefined) previous.socket.close(CLOSE_CODE.replaced, "replaced by a newer connection of this burner");
          this.#sessions.set(signer, session);
          stats.connected(signer, licenseIds);
          metrics.attestationNodes.set(this.#sessions.size);
          session.send({ type: "welcome", licenseIds: licenseIds.map(String) });
        },
        () => refuse(CLOSE_CODE.authFailed, "the license check failed; try again later", "auth"),
      );
    });
    ws.send(JSON.stringify({ type: "challenge", hub: hubName, chainId: chainId.toString(), nonce } satisfies HubMessage));
  }

  #drop(session: NodeSession & { socket: WebSocket }, code: number, reason: string): void {
    this.#options.metrics.attestationRefusedConnections.inc({ reason: "licenses-lost" });
    this.#options.logger.info({ burner: session.burner, reason }, "node dropped");
    this.#sessions.delete(session.burner);
    this.#options.stats.disconnected(session.burner);
    this.#options.metrics.attestationNodes.set(this.#sessions.size);
    session.socket.close(code, reason);
  }

  /** Connections that missed the last ping's pong are gone (a crashed node, a dead NAT mapping). */
  #ping(): void {
    for (const client of this.#wss.clients) {
      if (this.#alive.get(client) === false) {
        client.terminate();
        continue;
      }
      this.#alive.set(client, false);
      client.ping();
    }
  }
}

/** A text frame's payload as a string (`ws` hands it over as a Buffer, an ArrayBuffer or fragments). */
function textOf(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString("utf8");
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString("utf8");
  return data.toString("utf8");
}

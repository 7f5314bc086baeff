import { randomBytes } from "node:crypto";
import type { IncomingMessage, Server } from "node:http";
import type { Duplex } from "node:stream";

import { getAddress } from "ethers";
import type { Logger } from "pino";
import { WebSocketServer, type RawData, type WebSocket } from "ws";

import type { ApiMetrics } from "../metrics.ts";
import { AdmissionGate, type HubAdmissionOptions, type RefusalReason } from "./admission.ts";
import type { LicenseChecker } from "./license-checker.ts";
import type { NodeStats } from "./node-stats.ts";
import {
  challengeSigner,
  CLOSE_CODE,
  HUB_PATH,
  MAX_FRAME_BYTES,
  normalizeHubUrl,
  parseNodeMessage,
  type HubMessage,
  type NodeAnswer,
} from "../../common/hub-protocol.ts";
import { failureFields } from "../failure-log.ts";

/** An admitted node: its burner proved by the challenge, with live licenses. */
export interface NodeSession {
  burner: string;
  /** The licenses the node named in its hello (all of them operated and live at login), as of the last check. */
  licenseIds: bigint[];
  /** When the node was last heard from (`performance.now()`): a pong, a ping or a frame. */
  lastHeardAt: number;
  /**
   * Whether it has been silent longer than the ping interval and its allowance (`silentAfterMs`): a paused
   * process keeps its socket open and answers nothing. Such a node is neither asked nor counted towards the
   * quorum, nor published to the other instances, until it is heard from again.
   */
  silent: boolean;
  send(message: HubMessage): void;
}

export type { HubAdmissionOptions } from "./admission.ts";

export interface SessionsOptions {
  hubName: string;
  chainId: bigint;
  checker: LicenseChecker;
  stats: NodeStats;
  metrics: ApiMetrics;
  logger: Logger;
  /** How often every admitted burner's licenses are read again. */
  recheckMs: number;
  /** How often every connection is pinged (`ATTESTATION_PING_MS`; default 15 s). */
  pingMs?: number;
  /** How long a node has to answer the challenge (default 5 s). */
  challengeTimeoutMs?: number;
  /** Limits before login: `attestationSettings(config).admission`; fields left out take the configuration's defaults. */
  admission?: HubAdmissionOptions;
  onAnswer: (session: NodeSession, message: NodeAnswer) => void;
  /** Told when an admitted session goes silent (`silent` true) or is heard from again (false). */
  onSilence?: (session: NodeSession, silent: boolean) => void;
}

/** Largest frame before login: the hello (a few hundred bytes; 256 short license ids make a few KiB). */
const MAX_HELLO_BYTES = 8 * 1024;
/**
 * A node signs the challenge with a key it holds in memory, so it answers within a round trip; 5 s leaves
 * room for a slow link while a connection that never answers holds a pending slot half as long as before.
 */
const CHALLENGE_TIMEOUT_MS = 5_000;
/** `ATTESTATION_PING_MS`'s default. */
export const DEFAULT_PING_MS = 15_000;
/**
 * How much longer than the ping interval a node may go unheard before it is silent. A live node's pongs
 * come a ping interval apart, give or take the difference between two round trips and what held up either
 * event loop when the ping was sent or its pong read (a burst of signatures on the node, a GC pause, the
 * hub's own timers running late under load). A round trip between continents is under 0.3 s and such
 * stalls are well under a second, so 2 s never marks a live node silent, and a paused one is found within
 * the interval and 2 s (17 s at the default) rather than at its termination.
 */
export const PONG_ALLOWANCE_MS = 2_000;
/**
 * A connection unheard from this long (or for four ping intervals, if longer) is terminated: a crashed host
 * or a lost NAT mapping sends no close. Until then a silent node only stops being counted, so that one paused
 * for a while (a debugger, a suspended VM, a long GC) counts again at its next pong without a new login,
 * while a dead connection holds nothing but its socket for a minute; a new login of its burner replaces it.
 */
const TERMINATE_AFTER_MS = 60_000;
/** The close reason of a login whose list is not all operated and live (at most 123 bytes in a close frame). */
const NOT_OPERATOR_REASON = "a named license is not delegated to this burner, or the burner sent no heartbeat within the liveness window";

type Session = NodeSession & { socket: WebSocket; named: bigint[]; silence: NodeJS.Timeout };

/**
 * The hub's WebSocket endpoint (`/attest/ws` on the API's HTTP server) and its admitted nodes. A node
 * gets a challenge with a fresh 32-byte nonce and must answer with its burner's signature of
 * `challengeText` for the URL it dialled, naming its licenses; every license it names must be delegated to
 * the burner and the burner live, checked in one `eth_call` (`NodeRegistry.isLiveOperatorOf`) however
 * many it names. Each session's named licenses are read again every `recheckMs`; those no longer operated
 * and live drop out, and the session is dropped (close 4410) once none is left: transferred, undelegated
 * or no longer heart-beating. One session per burner: a new login replaces the old connection.
 *
 * Every connection is pinged each `pingMs`. A session not heard from (no pong, no ping, no frame) for longer
 * than `silentAfterMs` (the interval and `PONG_ALLOWANCE_MS`) is silent: its socket may still be open (a
 * paused process), but the rounds neither ask it nor count its licenses, and the hub does not publish it to
 * the other instances, until its next pong or frame. A connection unheard from for a minute (or four
 * intervals) is terminated.
 *
 * Before login everything is bounded (docs/api.md, "Limits before login"): pending connections in all and
 * per source address, an IPv6 one by its /64 (checked in the HTTP upgrade, before the handshake, so a
 * flood costs no challenge), one hello per connection within a small frame, a global hello rate taken
 * before any signature recovery or L2 read, and a memory of refused logins and of addresses that sent bad
 * hellos or let the challenge time out.
 */
export class HubSessions {
  readonly #options: SessionsOptions;
  readonly #gate: AdmissionGate;
  readonly #wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES });
  readonly #sessions = new Map<string, Session>();
  readonly #timers: NodeJS.Timeout[] = [];
  /** When each connection was last heard from (`performance.now()`), logged in or not. */
  readonly #lastHeard = new WeakMap<WebSocket, number>();
  #server: Server | undefined;
  /** How long an admitted node may go unheard before it is silent: the ping interval and `PONG_ALLOWANCE_MS`. */
  readonly silentAfterMs: number;
  readonly #terminateAfterMs: number;

  constructor(options: SessionsOptions) {
    this.#options = options;
    this.#gate = new AdmissionGate(options.admission);
    const pingMs = options.pingMs ?? DEFAULT_PING_MS;
    this.silentAfterMs = pingMs + PONG_ALLOWANCE_MS;
    this.#terminateAfterMs = Math.max(TERMINATE_AFTER_MS, 4 * pingMs);
    this.#timers.push(setInterval(() => void this.recheck(), options.recheckMs));
    this.#timers.push(setInterval(() => this.#ping(), pingMs));
    for (const timer of this.#timers) timer.unref();
  }

  /** Takes over WebSocket upgrades on `HUB_PATH`; other upgrade requests are refused. */
  attach(server: Server): void {
    this.#server = server;
    server.on("upgrade", (request: IncomingMessage, socket: Duplex, head: Buffer) => {
      if (new URL(request.url ?? "/", "http://hub").pathname !== HUB_PATH) {
        socket.end("HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n");
        return;
      }
      const address = this.#gate.sourceAddress(request);
      const entered = this.#gate.enter(address);
      if (typeof entered === "string") {
        this.#count(entered);
        const status = entered === "pending-cap" ? "503 Service Unavailable" : "429 Too Many Requests";
        socket.on("error", () => undefined);
        socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nRetry-After: 1\r\nContent-Length: 0\r\n\r\n`);
        return;
      }
      // Pending until admitted or closed (a failed handshake closes the socket too).
      socket.once("close", entered);
      this.#wss.handleUpgrade(request, socket, head, (ws) => this.#accept(ws, address, entered));
    });
  }

  /** The admitted sessions now, silent ones included (each says whether it is). */
  list(): NodeSession[] {
    return [...this.#sessions.values()];
  }

  /** The admitted sessions that answer: those the rounds ask and count, and the hub publishes. */
  answering(): NodeSession[] {
    return this.list().filter((session) => !session.silent);
  }

  /** Connections upgraded and not logged in yet. */
  get pending(): number {
    return this.#gate.pending;
  }

  /** Reads every admitted burner's named licenses again; drops those left with none. */
  async recheck(): Promise<void> {
    await Promise.all(
      [...this.#sessions.values()].map(async (session) => {
        try {
          const licenseIds = await this.#options.checker.operatedLiveLicenses(session.burner, session.named);
          if (this.#sessions.get(session.burner) !== session) return;
          this.#options.checker.forget(session.burner);
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
    for (const session of this.#sessions.values()) clearTimeout(session.silence);
    for (const client of this.#wss.clients) client.close(CLOSE_CODE.shuttingDown, "the API is stopping");
    await new Promise<void>((resolve) => this.#wss.close(() => resolve()));
    for (const client of this.#wss.clients) client.terminate();
  }

  #count(reason: RefusalReason): void {
    this.#options.metrics.attestationRefusedConnections.inc({ reason });
  }

  #accept(ws: WebSocket, address: string, release: () => void): void {
    const { hubName, chainId, checker, stats, metrics } = this.#options;
    const gate = this.#gate;
    const nonce = `0x${randomBytes(32).toString("hex")}`;
    let session: Session | undefined;
    this.#lastHeard.set(ws, performance.now());
    const heard = () => {
      const now = performance.now();
      this.#lastHeard.set(ws, now);
      if (session !== undefined) this.#heard(session, now);
    };
    const refuse = (code: number, reason: string, label: RefusalReason, strike = false) => {
      this.#count(label);
      if (strike) gate.strike(address);
      ws.close(code, reason);
    };
    let helloSeen = false;
    // No hello in time: a strike, like a bad hello (a client holding slots open until the timeout earns its
    // address a refusal, as one sending junk does). A hello still under check is the hub's delay, not the node's.
    const timer = setTimeout(() => {
      if (session !== undefined) return;
      if (helloSeen) refuse(CLOSE_CODE.tryLater, "the license check took too long; try again later", "timeout");
      else refuse(CLOSE_CODE.authFailed, "no answer to the challenge", "timeout", true);
    }, this.#options.challengeTimeoutMs ?? CHALLENGE_TIMEOUT_MS);
    ws.on("pong", heard);
    ws.on("ping", heard);
    ws.on("close", () => {
      clearTimeout(timer);
      release();
      if (session !== undefined) clearTimeout(session.silence);
      if (session !== undefined && this.#sessions.get(session.burner) === session) {
        this.#sessions.delete(session.burner);
        stats.disconnected(session.burner);
        metrics.attestationNodes.set(this.#sessions.size);
      }
    });
    ws.on("error", () => session === undefined && this.#count("protocol")); // followed by "close" (an oversized frame: 1009)
    ws.on("message", (data, isBinary) => {
      heard();
      if (session === undefined && (helloSeen || byteLength(data) > MAX_HELLO_BYTES))
        return refuse(CLOSE_CODE.protocol, helloSeen ? "one hello per connection" : "hello too large", "protocol", true);
      const message = isBinary ? undefined : parseNodeMessage(textOf(data));
      if (message === undefined) return refuse(CLOSE_CODE.protocol, "malformed message", "protocol", session === undefined);
      if (session !== undefined) {
        if (message.type === "hello") return refuse(CLOSE_CODE.protocol, "already logged in", "protocol");
        return this.#options.onAnswer(session, message);
      }
      if (message.type !== "hello") return refuse(CLOSE_CODE.protocol, "expected the challenge answer", "protocol", true);
      helloSeen = true;
      // Cheapest checks first; nothing below the rate limit runs for a hello over it.
      const claimed = getAddress(message.burner);
      const remembered = gate.refusedBurner(claimed, message.licenseIds);
      if (remembered !== undefined) return refuse(remembered.code, remembered.reason, "refused-recently");
      if (!gate.isPublicUrl(message.url, this.#server))
        return refuse(CLOSE_CODE.wrongUrl, "signed for a URL that is not this hub's", "wrong-url", true);
      if (!gate.takeHello()) return refuse(CLOSE_CODE.tryLater, "too many logins; try again later", "hello-rate");
      const signer = challengeSigner(hubName, chainId.toString(), normalizeHubUrl(message.url)!, nonce, message.signature);
      if (signer === undefined || signer !== claimed) return refuse(CLOSE_CODE.authFailed, "challenge answer refused", "auth", true);
      const named = message.licenseIds.map((id) => BigInt(id));
      // One eth_call for the whole list. A node names the licenses delegated to its burner (read at each of
      // its heartbeat ticks) only once its first heartbeat is mined, so an honest list is all live; one that
      // is not (a license transferred since the node's last read) is refused, and the node's next login
      // names its licenses as they are then. Answering with the live subset instead would take a read per id.
      void checker.isLiveOperatorOf(signer, named, { login: true }).then(
        (live) => {
          if (!live) {
            const refusal = { code: CLOSE_CODE.notOperator, reason: NOT_OPERATOR_REASON };
            gate.rememberBurner(signer, named, refusal);
            return refuse(refusal.code, refusal.reason, "not-operator", true);
          }
          if (ws.readyState !== ws.OPEN) return;
          clearTimeout(timer);
          release();
          const admitted: Session = {
            burner: signer,
            licenseIds: [...named],
            named,
            socket: ws,
            lastHeardAt: this.#lastHeard.get(ws) ?? performance.now(),
            silent: false,
            // Re-armed each time the node is heard from (`#heard`): it fires only after `silentAfterMs` unheard.
            // Decided a turn later (setImmediate): after a stall of this process, a pong already waiting in the
            // socket is read first, so a live node is not called silent for this process's own delay.
            silence: setTimeout(() => {
              const firedAt = performance.now();
              setImmediate(() => this.#silent(admitted, firedAt));
            }, this.silentAfterMs).unref(),
            send: (out) => ws.readyState === ws.OPEN && ws.send(JSON.stringify(out)),
          };
          session = admitted;
          const previous = this.#sessions.get(signer);
          if (previous !== undefined) previous.socket.close(CLOSE_CODE.replaced, "replaced by a newer connection of this burner");
          this.#sessions.set(signer, admitted);
          stats.connected(signer, named);
          metrics.attestationNodes.set(this.#sessions.size);
          admitted.send({ type: "welcome", licenseIds: named.map(String) });
        },
        () => refuse(CLOSE_CODE.tryLater, "the license check failed; try again later", "check-failed"),
      );
    });
    ws.send(JSON.stringify({ type: "challenge", hub: hubName, chainId: chainId.toString(), nonce } satisfies HubMessage));
  }

  #drop(session: Session, code: number, reason: string): void {
    this.#count("licenses-lost");
    this.#options.logger.info({ burner: session.burner, reason }, "node dropped");
    clearTimeout(session.silence);
    this.#sessions.delete(session.burner);
    this.#options.stats.disconnected(session.burner);
    this.#options.metrics.attestationNodes.set(this.#sessions.size);
    session.socket.close(code, reason);
  }

  /** The node behind `session` was heard from: its silence timer starts again, and a silent node counts again. */
  #heard(session: Session, now: number): void {
    session.lastHeardAt = now;
    session.silence.refresh();
    if (!session.silent || this.#sessions.get(session.burner) !== session) return;
    session.silent = false;
    this.#options.logger.info({ burner: session.burner }, "node answers again: asked and counted");
    this.#options.onSilence?.(session, false);
  }

  /** `silentAfterMs` went by without a word from the node (its timer was not re-armed). */
  #silent(session: Session, firedAt: number): void {
    if (session.silent || this.#sessions.get(session.burner) !== session) return;
    // Heard from since the timer fired (a pong read in the turn between): #heard re-armed the timer.
    if (session.lastHeardAt >= firedAt) return;
    session.silent = true;
    const silentForMs = Math.round(performance.now() - session.lastHeardAt);
    this.#options.logger.warn({ burner: session.burner, silentForMs }, "node silent past the ping interval: neither asked nor counted");
    this.#options.onSilence?.(session, true);
  }

  /** Pings every connection; one unheard from for `#terminateAfterMs` is gone (a crashed host, a dead NAT mapping). */
  #ping(): void {
    const now = performance.now();
    for (const client of this.#wss.clients) {
      if (now - (this.#lastHeard.get(client) ?? now) > this.#terminateAfterMs) {
        client.terminate();
        continue;
      }
      client.ping();
    }
  }
}

/** A frame's size in bytes. */
function byteLength(data: RawData): number {
  if (Array.isArray(data)) return data.reduce((sum, chunk) => sum + chunk.length, 0);
  return data instanceof ArrayBuffer ? data.byteLength : data.length;
}

/** A text frame's payload as a string (`ws` hands it over as a Buffer, an ArrayBuffer or fragments). */
function textOf(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString("utf8");
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString("utf8");
  return data.toString("utf8");
}

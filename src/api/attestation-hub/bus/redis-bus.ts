import { createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from "node:crypto";
import { EventEmitter } from "node:events";

import { AvnError } from "@avn/protocol/errors";
import type { Logger } from "pino";
import { createClient, ErrorReply } from "redis";
import { z } from "zod";

import { failureFields } from "../../failure-log.ts";
import type { ApiMetrics } from "../../metrics.ts";
import {
  ANSWER_OUTCOMES,
  emptyEntry,
  withPresence,
  type AnswerOutcome,
  type NodeStatsEntry,
  type PresentSession,
  type SharedNodeStats,
} from "../node-stats.ts";
import {
  MAX_ROUND_DEADLINE_MS,
  MIN_BUS_SECRET_LENGTH,
  parsePresence,
  parseRelayedAnswer,
  parseRelayedDone,
  parseRelayedRound,
  type BusHandlers,
  type HubBus,
  type RelayedAnswer,
  type RelayedDone,
  type RelayedRound,
} from "./bus.ts";
import { CONNECT_WAIT_MS, connectWithin } from "../../redis-connection.ts";

type RedisClient = ReturnType<typeof createClient>;

/** An instance's presence outlives its last refresh by this long: a process that dies drops out within it. */
export const PRESENCE_TTL_MS = 15_000;
const PRESENCE_REFRESH_MS = 5_000;
/**
 * How long one operation on Redis (a read of the peers' sessions, a write) may take before the bus counts
 * Redis as unreachable. node-redis bounds only the wait of a command not written yet (its `timeout` option),
 * not the wait for the reply of a server that took the command and is paused or cut off: a timer here does.
 * Generous: Redis answers in a millisecond, and a false alarm costs the rounds the other instances' nodes for
 * a second.
 */
export const BUS_COMMAND_TIMEOUT_MS = 1_000;
/** While Redis is unreachable, it is asked (PING, one at a time) this often whether it answers again. */
const PROBE_INTERVAL_MS = 1_000;
/** How long `close` waits for Redis to acknowledge it before it drops the connections. */
const CLOSE_TIMEOUT_MS = 1_000;

/** What the bus does with Redis, as `api_attestation_bus_failures_total` names the ones that failed or were skipped. */
export type BusOperation = "connection" | "presence" | "peers" | "stats-write" | "stats-read" | "round" | "answer" | "done" | "probe";

/** What a `RedisHubBus` emits (`once(bus, "reachable")`): its state as it changes, and what it did with Redis. */
export interface RedisHubBusEvents {
  /** The first operation of an outage failed: `reachable` is false from now on. */
  unreachable: [];
  /** A probe was answered: the outage is over (`reachable` true again). */
  reachable: [];
  /** An operation failed, or was refused during an outage: one more in `api_attestation_bus_failures_total`. */
  failure: [operation: BusOperation];
  /** Its subscriptions (rounds, its answers, results) are in place: at `start`, or once Redis answers after a start without it. */
  subscribed: [];
  /** Its presence, with these sessions, is written in Redis. */
  presence: [sessions: readonly PresentSession[]];
}

/**
 * The hub's bus (Redis) does not answer: this instance reaches its own nodes only. Thrown at once, without
 * asking Redis, from the moment one operation failed until Redis answers a probe again (`RedisHubBus.reachable`),
 * by `peerSessions` (the rounds then count this instance's sessions alone), `openRound`, `publishDone` and the
 * statistics' `list` (`GET /attest/nodes` answers 503).
 */
export class HubBusUnavailableError extends AvnError<"HUB_BUS_UNREACHABLE"> {
  override name = "HubBusUnavailableError";
  readonly operation: BusOperation;

  constructor(operation: BusOperation, options?: { cause?: unknown }) {
    super("HUB_BUS_UNREACHABLE", "the hub bus (Redis) is unreachable", options);
    this.operation = operation;
  }
}

/** What the bus carries, as the refused-messages metric names it. */
export type BusMessageKind = "round" | "answer" | "done" | "presence";
/**
 * Why a message read from Redis was dropped: no valid MAC (written without the secret, or for another
 * channel, key or hub), authenticated but too old or from too far in the future, a round relayed once
 * already, or authenticated but not what the schema says (an instance of another version).
 */
export type BusRefusal = "unauthenticated" | "stale" | "replayed" | "malformed";

/**
 * How far the instances' clocks may disagree (they run NTP; this is generous). Added to every age bound
 * below, and the most a message's time may lie ahead of the reader's clock.
 */
export const MAX_CLOCK_SKEW_MS = 5_000;
/**
 * How long a message of each kind is accepted after it was sealed (plus the clock skew). A round or an
 * answer is worth nothing once the longest round is over (a round is further held to its own deadline);
 * a presence value is rewritten every `PRESENCE_REFRESH_MS` and expires after `PRESENCE_TTL_MS`, so an
 * honest one is never older than that: a captured value written back later is refused.
 */
const MAX_AGE_MS: Record<BusMessageKind, number> = {
  round: MAX_ROUND_DEADLINE_MS,
  answer: MAX_ROUND_DEADLINE_MS,
  done: MAX_ROUND_DEADLINE_MS,
  presence: PRESENCE_TTL_MS,
};
/** A refusal of one kind and reason is logged at most this often (an attacker decides how many there are). */
const REFUSAL_LOG_INTERVAL_MS = 10_000;

const envelopeSchema = z.object({
  v: z.literal(1),
  at: z.number().int().nonnegative(),
  body: z.string(),
  mac: z.string().max(64),
});

/**
 * The authenticated envelope of everything the Redis bus writes: `{"v":1,"at":<ms>,"body":"<JSON>","mac":"…"}`,
 * the MAC an HMAC-SHA256 with a key derived (HKDF) from `HUB_BUS_SECRET` over the purpose (`kind`), the
 * full channel or key name (which carries the hub's prefix, and for an answer the instance it is for, for
 * presence the instance it is of), the time it was sealed and the body exactly as sent. So a message is
 * good for one channel or key of one hub, within its kind's age bound, and whoever writes to Redis
 * without the secret can neither forge one nor move a captured one elsewhere. The body is not hidden:
 * confidentiality is not the goal (a node's signatures are public once an answer carries them).
 */
export class BusEnvelopes {
  readonly #key: Buffer;
  readonly #now: () => number;

  /** `now` is the clock (tests inject one). */
  constructor(secret: string, now: () => number = Date.now) {
    // Checked here too, not only by the configuration: a bus without its secret would accept anything.
    if (secret.length < MIN_BUS_SECRET_LENGTH)
      throw new Error(`the hub bus secret (HUB_BUS_SECRET) needs at least ${MIN_BUS_SECRET_LENGTH} characters`);
    // A key of its own for this one purpose, whatever else the operator's secret might be used for.
    this.#key = Buffer.from(hkdfSync("sha256", secret, "avn-hub-bus", "avn-hub-bus/v1 message authentication", 32));
    this.#now = now;
  }

  /** `body` (JSON-able) sealed for channel or key `name`. */
  seal(kind: BusMessageKind, name: string, body: unknown): string {
    const text = JSON.stringify(body);
    const at = this.#now();
    return JSON.stringify({ v: 1, at, body: text, mac: this.#mac(kind, name, at, text).toString("base64url") });
  }

  /**
   * The body of a message read from channel or key `name`, or why it is refused. The MAC is checked
   * before the body is parsed, in constant time; then its age.
   */
  open(kind: BusMessageKind, name: string, raw: string): { body: unknown; at: number } | { refused: BusRefusal } {
    let envelope: z.infer<typeof envelopeSchema>;
    try {
      const parsed = envelopeSchema.safeParse(JSON.parse(raw));
      if (!parsed.success) return { refused: "unauthenticated" };
      envelope = parsed.data;
    } catch {
      return { refused: "unauthenticated" };
    }
    const expected = this.#mac(kind, name, envelope.at, envelope.body);
    const given = Buffer.from(envelope.mac, "base64url");
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { refused: "unauthenticated" };
    const age = this.#now() - envelope.at;
    if (age < -MAX_CLOCK_SKEW_MS || age > MAX_AGE_MS[kind] + MAX_CLOCK_SKEW_MS) return { refused: "stale" };
    try {
      return { body: JSON.parse(envelope.body), at: envelope.at };
    } catch {
      return { refused: "malformed" };
    }
  }

  /** This clock's time (ms since the epoch). */
  now(): number {
    return this.#now();
  }

  #mac(kind: BusMessageKind, name: string, at: number, body: string): Buffer {
    // A JSON array: each part delimited unambiguously, whatever characters a name or body holds.
    return createHmac("sha256", this.#key)
      .update(JSON.stringify(["avn-hub-bus/v1", kind, name, at, body]))
      .digest();
  }
}

/** What `RedisHubBus` needs besides Redis: the shared secret, and the metrics counting what it refuses and what fails. */
export interface RedisHubBusAuth {
  /** `HUB_BUS_SECRET`, the same on every instance of the hub. */
  secret: string;
  metrics: Pick<ApiMetrics, "attestationBusRefused" | "attestationBusDegraded" | "attestationBusFailures">;
  /** The clock (tests); `Date.now` otherwise. */
  now?: () => number;
  /** `BUS_COMMAND_TIMEOUT_MS` unless given (tests). */
  commandTimeoutMs?: number;
}

/**
 * The hub's instances joined through Redis (docs/attestations.md, "Several API instances"). Every key and
 * channel starts with `avn-hub:{<hub name>}:` (the braces make one Redis Cluster hash slot), so two
 * deployments, or two labels of one, never mix on one server:
 * - `instances` (set of instance ids) and `presence:<id>` (its sessions, JSON, expiring after
 *   `PRESENCE_TTL_MS` unless refreshed): who holds which node's session;
 * - channel `rounds`: rounds any instance opened; channel `answers:<id>`: answers for instance `<id>`'s rounds;
 * - `nodes` (set of burners) and `node:<burner>` (hash of counters): the shared statistics.
 *
 * Rounds and answers go by pub/sub, not streams: a round lives for its deadline (seconds), so a message
 * that is lost (an instance reconnecting to Redis) is worth no more when replayed than a node that stayed
 * silent, which a round already tolerates; pub/sub costs one PUBLISH and keeps nothing to trim.
 *
 * Redis is not trusted: every round, answer and presence value is sealed (`BusEnvelopes`) with the
 * hub's shared secret, and what is read back is opened, then checked against its schema; what fails
 * either is dropped and counted (`api_attestation_bus_messages_refused_total{kind,reason}`), never
 * handed to the rounds. A round is relayed once: the same one read again within its life is refused
 * (`replayed`). The node statistics hashes are not sealed (see `RedisNodeStats`).
 *
 * Redis going away degrades the hub, it does not stop it: the first operation that fails or takes longer
 * than `BUS_COMMAND_TIMEOUT_MS` (a connection error too) makes the bus unreachable (`reachable` false,
 * `api_attestation_bus_degraded` 1, one warning). From then on nothing is sent to Redis but a PING every
 * second (one at a time, and at once when the connection is back): `peerSessions` rejects at once with
 * `HubBusUnavailableError`, writes are dropped, each counted (`api_attestation_bus_failures_total{operation}`)
 * rather than logged. The first PING answered ends it (one info line, the gauge 0) and republishes this
 * instance's presence (a restarted Redis has lost it). It emits these changes as events (`RedisHubBusEvents`).
 */
export class RedisHubBus extends EventEmitter<RedisHubBusEvents> implements HubBus {
  readonly instanceId = randomBytes(8).toString("hex");
  readonly stats: SharedNodeStats;
  readonly #client: RedisClient;
  readonly #subscriber: RedisClient;
  readonly #prefix: string;
  readonly #logger: Logger;
  readonly #envelopes: BusEnvelopes;
  readonly #metrics: RedisHubBusAuth["metrics"];
  /** Rounds relayed already (`origin/id`), until their deadline (plus clock skew) has passed. */
  readonly #relayed = new Map<string, number>();
  /** The presence values refused at the last read (key → hash of the value): each is counted once. */
  #refusedPresence = new Map<string, string>();
  /** Refusals since the last log line, by `kind/reason`, and when that line was written. */
  readonly #refusalLog = new Map<string, { at: number; unlogged: number }>();
  #sessions: readonly PresentSession[] = [];
  #refresh: NodeJS.Timeout | undefined;
  #closed = false;
  readonly #commandTimeoutMs: number;
  /** Since when Redis is unreachable (performance.now()), with what failed since; undefined while it answers. */
  #outage: { since: number; failures: number; probe: NodeJS.Timeout } | undefined;
  /** A PING sent and not answered yet: never a second one (a paused Redis would run them all on waking). */
  #probing = false;

  private constructor(client: RedisClient, subscriber: RedisClient, hubName: string, logger: Logger, auth: RedisHubBusAuth) {
    super();
    this.#client = client;
    this.#subscriber = subscriber;
    this.#prefix = `avn-hub:{${hubName}}:`;
    this.#logger = logger;
    this.#envelopes = new BusEnvelopes(auth.secret, auth.now);
    this.#metrics = auth.metrics;
    this.#commandTimeoutMs = auth.commandTimeoutMs ?? BUS_COMMAND_TIMEOUT_MS;
    this.stats = new RedisNodeStats(
      client,
      this.#prefix,
      () => this.#presences(true),
      (operation, run) => this.#call(operation, run),
    );
    this.#metrics.attestationBusDegraded.set(0);
    // Both connections reconnect on their own and report each failed attempt: counted, logged once per outage.
    for (const connection of [client, subscriber]) connection.on("error", (error: unknown) => this.#failed("connection", error));
    // Back after a reconnection: ask at once rather than at the next probe.
    client.on("ready", () => {
      if (this.#outage !== undefined) this.#probe();
    });
  }

  /** Whether Redis answers: false from the first failed operation until a probe is answered again. */
  get reachable(): boolean {
    return this.#outage === undefined;
  }

  /**
   * Connects to `url` twice (commands, and subscriptions, which take a connection of their own). Every
   * message is sealed and checked with `auth.secret`; refusals are counted in `auth.metrics`.
   */
  static async connect(url: string, hubName: string, logger: Logger, auth: RedisHubBusAuth): Promise<RedisHubBus> {
    // Before connecting: a missing or short secret is a configuration error, not a Redis one.
    new BusEnvelopes(auth.secret);
    // No offline queue: while Redis is unreachable a round fails over to its own instance's nodes at once.
    const client: RedisClient = createClient({ url, disableOfflineQueue: true });
    const subscriber = client.duplicate();
    const bus = new RedisHubBus(client, subscriber, hubName, logger, auth); // listens to the connections' errors
    try {
      // A start during an outage goes on without Redis (its instance's own nodes only) and joins when it answers.
      const connected = await Promise.all([connectWithin(client, CONNECT_WAIT_MS), connectWithin(subscriber, CONNECT_WAIT_MS)]);
      if (connected.includes(false)) bus.#failed("connection", new Error(`Redis did not answer within ${CONNECT_WAIT_MS} ms of the start`));
    } catch (error) {
      await bus.close();
      throw error;
    }
    return bus;
  }

  async start(handlers: BusHandlers): Promise<void> {
    const rounds = `${this.#prefix}rounds`;
    const answers = `${this.#prefix}answers:${this.instanceId}`;
    const done = `${this.#prefix}done`;
    const subscribe = async () => {
      await this.#subscriber.subscribe([rounds, answers, done], (raw, channel) => {
        try {
          if (channel === rounds) this.#onRound(raw, channel, handlers);
          else if (channel === answers) this.#onAnswer(raw, channel, handlers);
          else if (channel === done) this.#onDone(raw, channel, handlers);
        } catch (error) {
          // A handler's own failure: the message itself was checked.
          this.#logger.warn({ failure: failureFields(error) }, "hub bus message not handled");
        }
      });
      this.emit("subscribed");
    };
    // Once subscribed, node-redis subscribes again after each reconnection; a start without Redis subscribes
    // when its connection first comes up.
    if (this.#subscriber.isReady) await subscribe();
    else this.#subscriber.once("ready", () => void subscribe().catch((error: unknown) => this.#failed("connection", error)));
    this.#publishPresence();
    this.#refresh = setInterval(() => {
      this.#publishPresence();
      this.#forgetRelayed();
    }, PRESENCE_REFRESH_MS);
    this.#refresh.unref();
  }

  publishSessions(sessions: readonly PresentSession[]): void {
    this.#sessions = sessions;
    this.#publishPresence();
  }

  /** The other instances' sessions; `HubBusUnavailableError` while Redis is unreachable (at once) or does not answer in time. */
  async peerSessions(): Promise<PresentSession[]> {
    return this.#call("peers", () => this.#presences(false));
  }

  async openRound(round: RelayedRound): Promise<void> {
    const channel = `${this.#prefix}rounds`;
    const message = this.#envelopes.seal("round", channel, round);
    await this.#call("round", () => this.#client.publish(channel, message));
  }

  forwardAnswer(origin: string, answer: RelayedAnswer): void {
    const channel = `${this.#prefix}answers:${origin}`;
    const message = this.#envelopes.seal("answer", channel, answer);
    // A lost answer is a silent node for that round; the failure is counted (and the outage logged once).
    this.#call("answer", () => this.#client.publish(channel, message)).catch(() => undefined);
  }

  async publishDone(done: RelayedDone): Promise<void> {
    const channel = `${this.#prefix}done`;
    const message = this.#envelopes.seal("done", channel, done);
    await this.#call("done", () => this.#client.publish(channel, message));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    clearInterval(this.#refresh);
    // While Redis answers, this instance's presence goes now (else it expires); then the connections close,
    // or are dropped when Redis does not acknowledge (paused, down): closing never waits on it.
    if (this.#client.isReady)
      await this.#call("presence", () =>
        Promise.all([
          this.#client.del(`${this.#prefix}presence:${this.instanceId}`),
          this.#client.sRem(`${this.#prefix}instances`, this.instanceId),
        ]),
      ).catch(() => undefined);
    this.#closed = true;
    this.#endOutage();
    await Promise.all([this.#subscriber, this.#client].map((connection) => closeConnection(connection)));
  }

  /**
   * `run`'s commands to Redis, within the command timeout; a failure to reach Redis or a timeout makes the
   * bus unreachable. While it is, `run` is not called: the operation is counted and refused at once. An
   * error Redis answered (a key of the wrong type: whoever writes to Redis can do that) is counted and
   * passed on as it is: Redis is there.
   */
  async #call<T>(operation: BusOperation, run: () => Promise<T>): Promise<T> {
    if (this.#closed) throw new HubBusUnavailableError(operation);
    if (this.#outage !== undefined) {
      this.#count(operation);
      throw new HubBusUnavailableError(operation);
    }
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        run(),
        new Promise<never>((_resolve, reject) => {
          // Rejected a turn later: an answer already in the socket after a stall of this process is read first.
          timer = setTimeout(
            () => setImmediate(() => reject(new Error(`Redis did not answer within ${this.#commandTimeoutMs} ms`))),
            this.#commandTimeoutMs,
          );
        }),
      ]);
    } catch (error) {
      if (error instanceof ErrorReply) {
        this.#count(operation);
        throw error;
      }
      this.#failed(operation, error);
      throw new HubBusUnavailableError(operation, { cause: error });
    } finally {
      clearTimeout(timer);
    }
  }

  /** Counts a failed operation; the first one of an outage starts it (a warning, the gauge 1, the probes). */
  #failed(operation: BusOperation, error: unknown): void {
    if (this.#closed) return;
    this.#count(operation);
    if (this.#outage !== undefined) return;
    const probe = setInterval(() => this.#probe(), PROBE_INTERVAL_MS);
    probe.unref();
    this.#outage = { since: performance.now(), failures: 1, probe };
    this.#metrics.attestationBusDegraded.set(1);
    this.#logger.warn(
      { failure: failureFields(error), operation },
      "hub bus (Redis) unreachable: rounds ask this instance's nodes only, statistics and presence are not shared until it answers again",
    );
    this.emit("unreachable");
  }

  #count(operation: BusOperation): void {
    this.#metrics.attestationBusFailures.inc({ operation });
    if (this.#outage !== undefined) this.#outage.failures += 1;
    this.emit("failure", operation);
  }

  /** Asks Redis whether it answers again (one PING at a time); the first answer ends the outage. */
  #probe(): void {
    if (this.#probing || this.#outage === undefined || this.#closed) return;
    this.#probing = true;
    this.#client.ping().then(
      () => {
        this.#probing = false;
        this.#recovered();
      },
      () => {
        this.#probing = false;
        this.#count("probe");
      },
    );
  }

  #recovered(): void {
    const outage = this.#outage;
    if (outage === undefined || this.#closed) return;
    this.#endOutage();
    this.#logger.info(
      { unreachableMs: Math.round(performance.now() - outage.since), failures: outage.failures },
      "hub bus (Redis) answers again: rounds, presence and statistics shared again",
    );
    this.emit("reachable");
    // A Redis that restarted has lost this instance's presence: the others count its nodes again at once.
    this.#publishPresence();
  }

  #endOutage(): void {
    if (this.#outage === undefined) return;
    clearInterval(this.#outage.probe);
    this.#outage = undefined;
    this.#metrics.attestationBusDegraded.set(0);
  }

  /** A round another instance published: authenticated, well-formed, open still, and not relayed before. */
  #onRound(raw: string, channel: string, handlers: BusHandlers): void {
    const opened = this.#envelopes.open("round", channel, raw);
    if ("refused" in opened) return this.#refuse("round", opened.refused);
    const round = parseRelayedRound(opened.body);
    if (round === undefined) return this.#refuse("round", "malformed");
    if (round.origin === this.instanceId) return; // its own, which every subscriber gets
    // Past its own deadline no answer counts: a round read later is a replay (or a very slow Redis).
    if (this.#envelopes.now() - opened.at > round.deadlineMs + MAX_CLOCK_SKEW_MS) return this.#refuse("round", "stale");
    // Read again within its life (the same message published twice): its nodes were asked already.
    const key = `${round.origin}/${round.request.id}`;
    if (this.#relayed.has(key)) return this.#refuse("round", "replayed");
    this.#relayed.set(key, opened.at + round.deadlineMs + MAX_CLOCK_SKEW_MS);
    handlers.round(round);
  }

  /**
   * An answer for a round this instance opened. A replay of an authenticated one within its age bound
   * changes nothing: the rounds count one answer per node and round, and an answer names its round.
   */
  #onAnswer(raw: string, channel: string, handlers: BusHandlers): void {
    const opened = this.#envelopes.open("answer", channel, raw);
    if ("refused" in opened) return this.#refuse("answer", opened.refused);
    const answer = parseRelayedAnswer(opened.body);
    if (answer === undefined) return this.#refuse("answer", "malformed");
    handlers.answer(answer);
  }

  /**
   * A round's result from the instance that opened it. A replay within its age bound reaches no node twice
   * for long: each node takes one result per round it signed, and only while it waits for it.
   */
  #onDone(raw: string, channel: string, handlers: BusHandlers): void {
    const opened = this.#envelopes.open("done", channel, raw);
    if ("refused" in opened) return this.#refuse("done", opened.refused);
    const done = parseRelayedDone(opened.body);
    if (done === undefined) return this.#refuse("done", "malformed");
    if (done.origin === this.instanceId) return; // its own, which every subscriber gets
    handlers.done(done);
  }

  /** Drops the rounds relayed whose deadline has passed: a replay of one is stale now. */
  #forgetRelayed(): void {
    const now = this.#envelopes.now();
    for (const [key, until] of this.#relayed) if (until < now) this.#relayed.delete(key);
  }

  /** Counts a refused message, and logs it (at most once per kind and reason every 10 s, with how many). */
  #refuse(kind: BusMessageKind, reason: BusRefusal): void {
    this.#metrics.attestationBusRefused.inc({ kind, reason });
    const key = `${kind}/${reason}`;
    const now = this.#envelopes.now();
    const entry = this.#refusalLog.get(key);
    if (entry !== undefined && now - entry.at < REFUSAL_LOG_INTERVAL_MS) {
      entry.unlogged += 1;
      return;
    }
    // Never the message itself: whoever wrote it chose what it says.
    this.#logger.warn({ kind, reason, notLoggedBefore: entry?.unlogged ?? 0 }, "hub bus message refused");
    this.#refusalLog.set(key, { at: now, unlogged: 0 });
  }

  #publishPresence(): void {
    if (this.#closed) return;
    const key = `${this.#prefix}presence:${this.instanceId}`;
    const sessions = this.#sessions;
    const value = this.#envelopes.seal("presence", key, sessions);
    const write = async () => {
      await this.#client.set(key, value, { PX: PRESENCE_TTL_MS });
      await this.#client.sAdd(`${this.#prefix}instances`, this.instanceId);
    };
    // Not published: counted; published again with the next refresh, or as soon as Redis answers again.
    this.#call("presence", write).then(
      () => this.emit("presence", sessions),
      () => undefined,
    );
  }

  /**
   * The sessions of the live instances (this one's too when `own`); instances whose presence expired are
   * forgotten. A presence value that is not authenticated for its key, too old, or malformed is left out
   * (counted once per value written): its instance counts as holding no session.
   */
  async #presences(own: boolean): Promise<PresentSession[]> {
    const ids = (await this.#client.sMembers(`${this.#prefix}instances`)).filter((id) => own || id !== this.instanceId);
    if (ids.length === 0) return [];
    const keys = ids.map((id) => `${this.#prefix}presence:${id}`);
    const values = await this.#client.mGet(keys);
    const gone = ids.filter((id, index) => values[index] === null && id !== this.instanceId);
    if (gone.length > 0) void this.#client.sRem(`${this.#prefix}instances`, gone).catch(() => undefined);
    const sessions: PresentSession[] = [];
    const refused = new Map<string, string>();
    for (const [index, value] of values.entries()) {
      if (value === null) continue;
      const key = keys[index];
      const opened = this.#envelopes.open("presence", key, value);
      const valid = "refused" in opened ? undefined : parsePresence(opened.body);
      if (valid !== undefined) {
        sessions.push(...valid);
        continue;
      }
      const digest = createHash("sha256").update(value).digest("base64");
      refused.set(key, digest);
      if (this.#refusedPresence.get(key) !== digest) this.#refuse("presence", "refused" in opened ? opened.refused : "malformed");
    }
    this.#refusedPresence = refused; // what is not refused now is forgotten: bounded by the instances listed
    return sessions;
  }
}

/**
 * The statistics in Redis: one hash of counters per burner, joined with the live presence when read.
 * Not sealed: every instance adds to them with HINCRBY, which a MAC over the hash would turn into a
 * read-modify-write per increment, and they decide nothing (rounds never read them; `GET /attest/nodes`
 * shows them). A writer without the secret can falsify these counters, as it can delete any key; what it
 * writes is read defensively, so it cannot make `GET /attest/nodes` fail.
 */
class RedisNodeStats implements SharedNodeStats {
  readonly #client: RedisClient;
  readonly #prefix: string;
  readonly #presence: () => Promise<PresentSession[]>;
  /** The bus's way to Redis: within its timeout, refused at once while it is unreachable. */
  readonly #call: <T>(operation: BusOperation, run: () => Promise<T>) => Promise<T>;

  constructor(
    client: RedisClient,
    prefix: string,
    presence: () => Promise<PresentSession[]>,
    call: <T>(operation: BusOperation, run: () => Promise<T>) => Promise<T>,
  ) {
    this.#client = client;
    this.#prefix = prefix;
    this.#presence = presence;
    this.#call = call;
  }

  seen(burner: string, licenseIds: readonly string[]): void {
    this.#write(burner, (key) => this.#client.hSet(key, "licenseIds", JSON.stringify(licenseIds)));
  }

  asked(burner: string): void {
    this.#write(burner, (key) => this.#client.hIncrBy(key, "asked", 1));
  }

  answered(burner: string, outcome: AnswerOutcome, at: string): void {
    this.#write(burner, async (key) => {
      await this.#client.hIncrBy(key, outcome, 1);
      if (outcome !== "silent") await this.#client.hSet(key, "lastAnswerAt", at);
    });
  }

  /**
   * Every instance's counters and sessions, or `HubBusUnavailableError` while Redis is unreachable: `GET
   * /attest/nodes` is then a 503, not this instance's part passed off as the whole (the nodes of the other
   * instances would show as disconnected).
   */
  async list(): Promise<NodeStatsEntry[]> {
    const [burners, sessions, hashes] = await this.#call("stats-read", async () => {
      const [burners, sessions] = await Promise.all([this.#client.sMembers(`${this.#prefix}nodes`), this.#presence()]);
      return [
        burners,
        sessions,
        await Promise.all(burners.map((burner) => this.#client.hGetAll(`${this.#prefix}node:${burner}`))),
      ] as const;
    });
    const entries = burners.map((burner, index) => {
      const hash = hashes[index] as Record<string, string>;
      const entry = emptyEntry(burner);
      entry.asked = count(hash.asked);
      for (const outcome of ANSWER_OUTCOMES) entry.answers[outcome] = count(hash[outcome]);
      entry.lastAnswerAt = hash.lastAnswerAt ?? null;
      entry.licenseIds = licenseIdsOf(hash.licenseIds);
      return entry;
    });
    return withPresence(entries, sessions);
  }

  #write(burner: string, write: (key: string) => Promise<unknown>): void {
    // Commands issued in one tick leave as one pipeline (node-redis), so a round's counters cost one round trip.
    // Not written (Redis unreachable): a count lost, counted, never an answer (the outage is logged once).
    this.#call("stats-write", () =>
      Promise.all([this.#client.sAdd(`${this.#prefix}nodes`, burner), write(`${this.#prefix}node:${burner}`)]),
    ).catch(() => undefined);
  }
}

/** QUIT when Redis acknowledges it in time; otherwise (down, paused) the connection is dropped rather than waited for. */
async function closeConnection(connection: RedisClient): Promise<void> {
  if (connection.isReady) {
    let timer: NodeJS.Timeout | undefined;
    const quit = await Promise.race([
      connection.quit().then(
        () => true,
        () => false,
      ),
      new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), CLOSE_TIMEOUT_MS))),
    ]);
    clearTimeout(timer);
    if (quit) return;
  }
  connection.destroy();
}

/** A counter as stored (HINCRBY writes decimal integers); anything else is 0. */
function count(value: string | undefined): number {
  const number = Number(value ?? 0);
  return Number.isSafeInteger(number) && number >= 0 ? number : 0;
}

/** The license ids `seen` wrote (a JSON list of decimal strings); anything else is none. */
function licenseIdsOf(value: string | undefined): string[] {
  if (value === undefined) return [];
  try {
    const ids: unknown = JSON.parse(value);
    return Array.isArray(ids) && ids.every((id) => typeof id === "string" && /^\d{1,78}$/.test(id)) ? (ids as string[]) : [];
  } catch {
    return [];
  }
}

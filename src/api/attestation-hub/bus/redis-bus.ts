import { randomBytes } from "node:crypto";

import type { Logger } from "pino";
import { createClient } from "redis";

import { failureFields } from "../../failure-log.ts";
import {
  ANSWER_OUTCOMES,
  emptyEntry,
  withPresence,
  type AnswerOutcome,
  type NodeStatsEntry,
  type PresentSession,
  type SharedNodeStats,
} from "../node-stats.ts";
import { parseRelayedAnswer, parseRelayedRound, type BusHandlers, type HubBus, type RelayedAnswer, type RelayedRound } from "./bus.ts";

type RedisClient = ReturnType<typeof createClient>;

/** An instance's presence outlives its last refresh by this long: a process that dies drops out within it. */
export const PRESENCE_TTL_MS = 15_000;
const PRESENCE_REFRESH_MS = 5_000;

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
 */
export class RedisHubBus implements HubBus {
  readonly instanceId = randomBytes(8).toString("hex");
  readonly stats: SharedNodeStats;
  readonly #client: RedisClient;
  readonly #subscriber: RedisClient;
  readonly #prefix: string;
  readonly #logger: Logger;
  #sessions: readonly PresentSession[] = [];
  #refresh: NodeJS.Timeout | undefined;
  #closed = false;

  private constructor(client: RedisClient, subscriber: RedisClient, hubName: string, logger: Logger) {
    this.#client = client;
    this.#subscriber = subscriber;
    this.#prefix = `avn-hub:{${hubName}}:`;
    this.#logger = logger;
    this.stats = new RedisNodeStats(client, this.#prefix, () => this.#presences(true), logger);
  }

  /** Connects to `url` twice (commands, and subscriptions, which take a connection of their own). */
  static async connect(url: string, hubName: string, logger: Logger): Promise<RedisHubBus> {
    // No offline queue: while Redis is unreachable a round fails over to its own instance's nodes at once.
    const client: RedisClient = createClient({ url, disableOfflineQueue: true });
    const subscriber = client.duplicate();
    for (const connection of [client, subscriber])
      connection.on("error", (error: unknown) => logger.warn({ failure: failureFields(error) }, "Redis connection error (hub bus)"));
    await client.connect();
    try {
      await subscriber.connect();
    } catch (error) {
      await client.quit().catch(() => undefined);
      throw error;
    }
    return new RedisHubBus(client, subscriber, hubName, logger);
  }

  async start(handlers: BusHandlers): Promise<void> {
    await this.#subscriber.subscribe([`${this.#prefix}rounds`, `${this.#prefix}answers:${this.instanceId}`], (raw, channel) => {
      try {
        if (channel === `${this.#prefix}rounds`) {
          const round = parseRelayedRound(JSON.parse(raw));
          if (round === undefined) return this.#logger.warn({ channel: "rounds" }, "malformed hub bus message");
          if (round.origin !== this.instanceId) handlers.round(round);
        } else {
          const answer = parseRelayedAnswer(JSON.parse(raw));
          if (answer === undefined) return this.#logger.warn({ channel: "answers" }, "malformed hub bus message");
          handlers.answer(answer);
        }
      } catch (error) {
        this.#logger.warn({ failure: failureFields(error) }, "malformed hub bus message");
      }
    });
    this.#publishPresence();
    this.#refresh = setInterval(() => this.#publishPresence(), PRESENCE_REFRESH_MS);
    this.#refresh.unref();
  }

  publishSessions(sessions: readonly PresentSession[]): void {
    this.#sessions = sessions;
    this.#publishPresence();
  }

  async peerSessions(): Promise<PresentSession[]> {
    return this.#presences(false);
  }

  async openRound(round: RelayedRound): Promise<void> {
    await this.#client.publish(`${this.#prefix}rounds`, JSON.stringify(round));
  }

  forwardAnswer(origin: string, answer: RelayedAnswer): void {
    this.#client
      .publish(`${this.#prefix}answers:${origin}`, JSON.stringify(answer))
      .catch((error: unknown) => this.#logger.warn({ failure: failureFields(error) }, "answer not forwarded (Redis)"));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#refresh);
    await Promise.all([
      this.#client.del(`${this.#prefix}presence:${this.instanceId}`),
      this.#client.sRem(`${this.#prefix}instances`, this.instanceId),
    ]).catch(() => undefined); // it expires anyway
    await this.#subscriber.quit().catch(() => undefined);
    await this.#client.quit().catch(() => undefined);
  }

  #publishPresence(): void {
    if (this.#closed) return;
    const write = async () => {
      await this.#client.set(`${this.#prefix}presence:${this.instanceId}`, JSON.stringify(this.#sessions), { PX: PRESENCE_TTL_MS });
      await this.#client.sAdd(`${this.#prefix}instances`, this.instanceId);
    };
    write().catch((error: unknown) => this.#logger.warn({ failure: failureFields(error) }, "hub presence not published (Redis)"));
  }

  /** The sessions of the live instances (this one's too when `own`); instances whose presence expired are forgotten. */
  async #presences(own: boolean): Promise<PresentSession[]> {
    const ids = (await this.#client.sMembers(`${this.#prefix}instances`)).filter((id) => own || id !== this.instanceId);
    if (ids.length === 0) return [];
    const values = await this.#client.mGet(ids.map((id) => `${this.#prefix}presence:${id}`));
    const gone = ids.filter((id, index) => values[index] === null && id !== this.instanceId);
    if (gone.length > 0) void this.#client.sRem(`${this.#prefix}instances`, gone).catch(() => undefined);
    return values.flatMap((value) => (value === null ? [] : (JSON.parse(value) as PresentSession[])));
  }
}

/** The statistics in Redis: one hash of counters per burner, joined with the live presence when read. */
class RedisNodeStats implements SharedNodeStats {
  readonly #client: RedisClient;
  readonly #prefix: string;
  readonly #presence: () => Promise<PresentSession[]>;
  readonly #logger: Logger;

  constructor(client: RedisClient, prefix: string, presence: () => Promise<PresentSession[]>, logger: Logger) {
    this.#client = client;
    this.#prefix = prefix;
    this.#presence = presence;
    this.#logger = logger;
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

  async list(): Promise<NodeStatsEntry[]> {
    const [burners, sessions] = await Promise.all([this.#client.sMembers(`${this.#prefix}nodes`), this.#presence()]);
    const hashes = await Promise.all(burners.map((burner) => this.#client.hGetAll(`${this.#prefix}node:${burner}`)));
    const entries = burners.map((burner, index) => {
      const hash = hashes[index] as Record<string, string>;
      const entry = emptyEntry(burner);
      entry.asked = Number(hash.asked ?? 0);
      for (const outcome of ANSWER_OUTCOMES) entry.answers[outcome] = Number(hash[outcome] ?? 0);
      entry.lastAnswerAt = hash.lastAnswerAt ?? null;
      entry.licenseIds = hash.licenseIds === undefined ? [] : (JSON.parse(hash.licenseIds) as string[]);
      return entry;
    });
    return withPresence(entries, sessions);
  }

  #write(burner: string, write: (key: string) => Promise<unknown>): void {
    // Commands issued in one tick leave as one pipeline (node-redis), so a round's counters cost one round trip.
    Promise.all([this.#client.sAdd(`${this.#prefix}nodes`, burner), write(`${this.#prefix}node:${burner}`)]).catch((error: unknown) =>
      this.#logger.warn({ failure: failureFields(error) }, "node statistics not written (Redis)"),
    );
  }
}

import cluster from "node:cluster";

import type { Logger } from "pino";

import { pushToWorker, type IpcService, type PrimaryClient } from "../../cluster/ipc.ts";
import { failureFields } from "../../failure-log.ts";
import {
  NodeStatsTable,
  withPresence,
  type AnswerOutcome,
  type NodeStatsEntry,
  type PresentSession,
  type SharedNodeStats,
} from "../node-stats.ts";
import {
  parseRelayedAnswer,
  parseRelayedDone,
  parseRelayedRound,
  type BusHandlers,
  type HubBus,
  type RelayedAnswer,
  type RelayedDone,
  type RelayedRound,
} from "./bus.ts";

/** The IPC service name of the hub's bus in the primary, and its push topics. */
const SERVICE = "hubBus";
const ROUND_TOPIC = "hub.round";
const ANSWER_TOPIC = "hub.answer";
const DONE_TOPIC = "hub.done";

const instanceOf = (workerId: number) => `worker-${workerId}`;
const workerOf = (instanceId: string) => Number(instanceId.slice("worker-".length));

/**
 * The bus of a cluster's workers without Redis (`API_WORKERS` > 1 on one host): the primary routes
 * rounds and answers between its workers over Node's IPC channel, and keeps their sessions and the node
 * statistics in its memory. A worker that dies takes its sessions with it (the primary sees it exit).
 */
export class PrimaryHubBus implements HubBus {
  readonly instanceId: string;
  readonly stats: SharedNodeStats;
  readonly #primary: PrimaryClient;
  readonly #logger: Logger;

  constructor(primary: PrimaryClient, logger: Logger) {
    this.#primary = primary;
    this.#logger = logger;
    this.instanceId = instanceOf(primary.workerId);
    const tell = (method: string, args: unknown[]) => this.#tell(method, args);
    this.stats = {
      seen: (burner, licenseIds) => tell("seen", [burner, licenseIds]),
      asked: (burner) => tell("asked", [burner]),
      answered: (burner, outcome, at) => tell("answered", [burner, outcome, at]),
      list: () => primary.call<NodeStatsEntry[]>(SERVICE, "list", []),
    };
  }

  async start(handlers: BusHandlers): Promise<void> {
    // The primary passes on what another worker sent: checked here as any message from another process.
    this.#primary.onPush(ROUND_TOPIC, (payload) => {
      const round = parseRelayedRound(payload);
      if (round === undefined) this.#logger.warn({ topic: ROUND_TOPIC }, "malformed hub bus message");
      else handlers.round(round);
    });
    this.#primary.onPush(ANSWER_TOPIC, (payload) => {
      const answer = parseRelayedAnswer(payload);
      if (answer === undefined) this.#logger.warn({ topic: ANSWER_TOPIC }, "malformed hub bus message");
      else handlers.answer(answer);
    });
    this.#primary.onPush(DONE_TOPIC, (payload) => {
      const done = parseRelayedDone(payload);
      if (done === undefined) this.#logger.warn({ topic: DONE_TOPIC }, "malformed hub bus message");
      else handlers.done(done);
    });
  }

  publishSessions(sessions: readonly PresentSession[]): void {
    this.#tell("presence", [this.instanceId, sessions]);
  }

  peerSessions(): Promise<PresentSession[]> {
    return this.#primary.call<PresentSession[]>(SERVICE, "peers", [this.instanceId]);
  }

  async openRound(round: RelayedRound): Promise<void> {
    await this.#primary.call(SERVICE, "round", [round]);
  }

  forwardAnswer(origin: string, answer: RelayedAnswer): void {
    this.#tell("answer", [origin, answer]);
  }

  async publishDone(done: RelayedDone): Promise<void> {
    await this.#primary.call(SERVICE, "done", [done]);
  }

  async close(): Promise<void> {
    // The primary forgets this worker's sessions when it exits; say so earlier, as it stops accepting.
    await this.#primary.call(SERVICE, "presence", [this.instanceId, []]).catch(() => undefined);
  }

  #tell(method: string, args: unknown[]): void {
    this.#primary
      .call(SERVICE, method, args)
      .catch((error: unknown) => this.#logger.warn({ failure: failureFields(error), method }, "hub bus call to the primary failed"));
  }
}

/**
 * The primary's side of `PrimaryHubBus`: the workers' sessions and the node statistics, and the routing
 * of rounds and their results (to every other worker) and answers (to the worker that opened the round).
 */
export class HubBusRouter {
  readonly #presence = new Map<string, readonly PresentSession[]>();
  readonly #table = new NodeStatsTable();

  /** The IPC service the workers call (`serveWorkers({ hubBus: router.service })`). */
  readonly service: IpcService = {
    presence: async (instanceId: string, sessions: PresentSession[]) => {
      if (sessions.length === 0) this.#presence.delete(instanceId);
      else this.#presence.set(instanceId, sessions);
    },
    peers: async (instanceId: string) => [...this.#presence].flatMap(([id, sessions]) => (id === instanceId ? [] : sessions)),
    round: async (round: RelayedRound) => {
      for (const worker of Object.values(cluster.workers ?? {}))
        if (worker !== undefined && instanceOf(worker.id) !== round.origin) pushToWorker(worker, ROUND_TOPIC, round);
    },
    done: async (done: RelayedDone) => {
      for (const worker of Object.values(cluster.workers ?? {}))
        if (worker !== undefined && instanceOf(worker.id) !== done.origin) pushToWorker(worker, DONE_TOPIC, done);
    },
    answer: async (origin: string, answer: RelayedAnswer) => {
      const worker = cluster.workers?.[workerOf(origin)];
      if (worker !== undefined) pushToWorker(worker, ANSWER_TOPIC, answer);
    },
    seen: async (burner: string, licenseIds: string[]) => this.#table.licenses(burner, licenseIds),
    asked: async (burner: string) => this.#table.asked(burner),
    answered: async (burner: string, outcome: AnswerOutcome, at: string) => this.#table.answered(burner, outcome, at),
    list: async () => withPresence(this.#table.list(), [...this.#presence.values()].flat()),
  };

  /** A worker exited: its sessions are gone. */
  workerExited(workerId: number): void {
    this.#presence.delete(instanceOf(workerId));
  }
}

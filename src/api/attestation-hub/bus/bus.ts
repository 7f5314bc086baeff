import type { HubMessage, NodeMessage } from "../../../common/hub-protocol.ts";
import type { PresentSession, SharedNodeStats } from "../node-stats.ts";

/** An `attest` request, as the hub sends it to a node. */
export type AttestRequest = Extract<HubMessage, { type: "attest" }>;
/** A node's answer to an `attest` request, as its session received it. */
export type NodeAnswer = Extract<NodeMessage, { type: "attestation" | "refusal" }>;

/** A round opened by instance `origin`, for the nodes `burners` (the sessions it counted, wherever they are). */
export interface RelayedRound {
  origin: string;
  /** How long the round is open: answers arriving later are dropped by the instance holding the session. */
  deadlineMs: number;
  burners: string[];
  request: AttestRequest;
}

/** A node's answer, forwarded by the instance holding its session with the burner that session authenticated. */
export interface RelayedAnswer {
  burner: string;
  answer: NodeAnswer;
}

export interface BusHandlers {
  /** A round opened by another instance: ask the named nodes whose sessions are here. */
  round(round: RelayedRound): void;
  /** An answer to a round this instance opened, from a node connected to another one. */
  answer(answer: RelayedAnswer): void;
}

/**
 * What joins several instances of one hub (API worker processes, or API processes on several hosts) into
 * one: each node keeps its one connection to one instance, and a round opened on any instance reaches
 * the nodes connected anywhere. Three parts:
 * - presence: each instance publishes the sessions it holds; an instance that stops or dies drops out
 *   (its entry expires, or the primary sees its worker exit);
 * - rounds and answers: a round is published to the other instances, and each node's answer goes back to
 *   the instance that opened it, which alone verifies and counts it;
 * - the node statistics, shared.
 * Implementations: `RedisHubBus` (any number of processes and hosts, `REDIS_URL`) and `PrimaryHubBus` (a
 * cluster's workers, through their primary). A hub of one process has none.
 */
export interface HubBus {
  /** This instance's id, unique among the live ones. */
  readonly instanceId: string;
  readonly stats: SharedNodeStats;
  /** Starts delivering to `handlers`; resolves once this instance receives rounds and answers. */
  start(handlers: BusHandlers): Promise<void>;
  /** The sessions this instance holds now (the whole list; published at once and refreshed before it expires). */
  publishSessions(sessions: readonly PresentSession[]): void;
  /** The sessions the other live instances hold. */
  peerSessions(): Promise<PresentSession[]>;
  /** Publishes a round this instance opened to the other instances. */
  openRound(round: RelayedRound): Promise<void>;
  /** Sends an answer to the instance that opened its round. */
  forwardAnswer(origin: string, answer: RelayedAnswer): void;
  /** Withdraws this instance's presence and closes subscriptions and connections. */
  close(): Promise<void>;
}

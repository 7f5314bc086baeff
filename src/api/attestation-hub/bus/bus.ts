import { getAddress, isAddress } from "ethers";
import { z } from "zod";

import {
  MAX_DONE_SIGNATURES,
  MAX_HELLO_LICENSES,
  MAX_ROUND_DEADLINE_MS,
  nodeMessageSchema,
  roundDoneSchema,
  roundRequestSchema,
  type NodeAnswer,
  type RoundDone,
} from "../../../common/hub-protocol.ts";
import type { PresentSession, SharedNodeStats } from "../node-stats.ts";
import type { RoundRequest } from "../round-kinds.ts";

export { MAX_ROUND_DEADLINE_MS } from "../../../common/hub-protocol.ts";
export type { NodeAnswer, RoundDone } from "../../../common/hub-protocol.ts";
export type { RoundRequest } from "../round-kinds.ts";

/** A round opened by instance `origin`, for the nodes `burners` (the sessions it counted, wherever they are). */
export interface RelayedRound {
  origin: string;
  /** How long the round is open: answers arriving later are dropped by the instance holding the session. */
  deadlineMs: number;
  burners: string[];
  /** The request its nodes get, of either kind (`attest`, `attestCondition`). */
  request: RoundRequest;
}

/** A node's answer, forwarded by the instance holding its session with the burner that session authenticated. */
export interface RelayedAnswer {
  burner: string;
  answer: NodeAnswer;
}

/**
 * A round's result, published by the instance that opened it to the others: each passes `done` to its own
 * sessions among `recipients` whose answer it forwarded for that round (`AttestationRounds.relayedDone`).
 */
export interface RelayedDone {
  origin: string;
  recipients: string[];
  done: RoundDone;
}

const burner = z
  .string()
  .refine((value) => isAddress(value))
  .transform((value) => getAddress(value));
// The most nodes one round asks: far beyond any network (a license per node at least), small enough to bound a message.
const MAX_ROUND_BURNERS = 10_000;

/** The shortest `HUB_BUS_SECRET` accepted (characters): 32 hex digits are 128 bits. */
export const MIN_BUS_SECRET_LENGTH = 32;

const relayedRoundSchema = z.object({
  origin: z.string().min(1).max(64),
  deadlineMs: z.number().int().positive().max(MAX_ROUND_DEADLINE_MS),
  burners: z.array(burner).max(MAX_ROUND_BURNERS),
  request: roundRequestSchema,
});
const relayedAnswerSchema = z.object({ burner, answer: nodeMessageSchema });
const relayedDoneSchema = z.object({
  origin: z.string().min(1).max(64),
  recipients: z.array(burner).min(1).max(MAX_DONE_SIGNATURES),
  done: roundDoneSchema,
});
/** One instance's sessions, as it publishes them: what the rounds count against the quorum and ask. */
const presenceSchema = z
  .array(
    z.object({
      burner,
      licenseIds: z.array(z.string().regex(/^\d{1,78}$/)).max(MAX_HELLO_LICENSES),
      since: z.iso.datetime(),
    }),
  )
  .max(MAX_ROUND_BURNERS);

/**
 * A round as another instance published it, checked as every message from outside this process is: a
 * malformed one is dropped (undefined) rather than thrown inside a subscription handler. The request is
 * a node's to judge anyway; this keeps a garbled message from reaching the sessions at all.
 */
export function parseRelayedRound(value: unknown): RelayedRound | undefined {
  const parsed = relayedRoundSchema.safeParse(value);
  return parsed.success ? (parsed.data as RelayedRound) : undefined;
}

/**
 * An answer forwarded by the instance holding the node's session, checked against the node frame's own
 * schema: the instance that opened the round judges it as it would a local one (signature, licenses), so
 * whoever can write to the bus can only repeat what a node signed, and nothing malformed reaches that judge.
 */
export function parseRelayedAnswer(value: unknown): RelayedAnswer | undefined {
  const parsed = relayedAnswerSchema.safeParse(value);
  if (!parsed.success) return undefined;
  const { burner, answer } = parsed.data;
  return answer.type === "hello" ? undefined : { burner, answer };
}

/** A round's result as another instance published it, checked like every message from outside this process. */
export function parseRelayedDone(value: unknown): RelayedDone | undefined {
  const parsed = relayedDoneSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

/**
 * The sessions another instance published, checked like every other message from outside this process:
 * a malformed list is dropped (undefined) whole, never handed to the rounds, which read each session's
 * license ids as numbers.
 */
export function parsePresence(value: unknown): PresentSession[] | undefined {
  const parsed = presenceSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

export interface BusHandlers {
  /** A round opened by another instance: ask the named nodes whose sessions are here. */
  round(round: RelayedRound): void;
  /** An answer to a round this instance opened, from a node connected to another one. */
  answer(answer: RelayedAnswer): void;
  /** The result of a round another instance opened: for the nodes here whose answers were forwarded to it. */
  done(done: RelayedDone): void;
}

/**
 * What joins several instances of one hub (API worker processes, or API processes on several hosts) into
 * one: each node keeps its one connection to one instance, and a round opened on any instance reaches
 * the nodes connected anywhere. Three parts:
 * - presence: each instance publishes the sessions it holds; an instance that stops or dies drops out
 *   (its entry expires, or the primary sees its worker exit);
 * - rounds and answers: a round is published to the other instances, and each node's answer goes back to
 *   the instance that opened it, which alone verifies and counts it, and publishes the round's result;
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
  /** Publishes the result of a round this instance opened to the other instances. */
  publishDone(done: RelayedDone): Promise<void>;
  /** Withdraws this instance's presence and closes subscriptions and connections. */
  close(): Promise<void>;
}

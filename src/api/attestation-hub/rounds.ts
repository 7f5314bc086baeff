import { randomBytes } from "node:crypto";

import { MAX_ATTESTATION_LICENSES, type AttestationDomain, type BalanceAttestation, type NodeSignature } from "@avn/protocol/attestation";
import type { ConditionAttestation } from "@avn/protocol/conditions";
import type { ApiMetrics } from "../metrics.ts";
import type { LicenseChecker } from "./license-checker.ts";
import type { AnswerOutcome, NodeStats } from "./node-stats.ts";
import {
  MAX_DONE_SIGNATURES,
  MAX_FRAME_BYTES,
  MAX_ROUND_DEADLINE_MS,
  type AttestQuery,
  type ConditionQuery,
  type NodeAnswer,
  type RoundDone,
} from "../../common/hub-protocol.ts";
import type { NodeSession } from "./sessions.ts";
import type { HubBus, RelayedDone, RelayedRound } from "./bus/bus.ts";
import { chooseQuorumSet } from "./quorum-set.ts";
import { TokenBucket } from "../../common/token-bucket.ts";
import { attestationStructHash, recoverAttestationSigner } from "../../common/attestation.ts";
import { balanceRound, conditionRound, type LeafEvidence, type RoundKind, type RoundRequest } from "./round-kinds.ts";
import { AvnError } from "@avn/protocol/errors";

/** Not enough licenses connected, or no quorum within the deadline: the API answers 503 with Retry-After. */
export class QuorumNotReachedError extends AvnError<"QUORUM_NOT_REACHED"> {
  constructor(message: string) {
    super("QUORUM_NOT_REACHED", message);
    this.name = "QuorumNotReachedError";
  }
}

/**
 * A struct signed by a quorum, with the signatures (sorted by signer), and what one of its signers read
 * (`evidence`, checked against the struct): absent when none of them could send it in a frame.
 */
export interface Attested<S = BalanceAttestation, E = string> {
  attestation: S;
  signatures: NodeSignature[];
  evidence?: E;
}

interface Group<S> {
  attestation: S;
  signatures: Map<string, NodeSignature>;
  licenses: Set<bigint>;
  evidence?: unknown;
}

interface RoundsOptions {
  domain: AttestationDomain;
  checker: LicenseChecker;
  stats: NodeStats;
  metrics: ApiMetrics;
  /** The sessions this instance holds now, silent ones included (`NodeSession.silent`). */
  sessions: () => NodeSession[];
  /** Joins the instances of a hub of several processes (absent: this process is the whole hub). */
  bus?: HubBus;
  /**
   * The most round results (`roundDone`) this instance sends a second, on average (bursts of as many): a
   * round over the budget sends none, so every signer sees the same sample. 0 sends none.
   */
  resultsPerSecond?: number;
  logger?: import("pino").Logger;
}

/** A node to ask: a session here (with `send`), or one another instance holds. */
export interface Asked {
  burner: string;
  licenseIds: readonly bigint[];
  send?: (message: RoundRequest) => void;
}

/**
 * What a round may count on, read before its question is (`AttestationRounds.admit`): the registry's quorum,
 * and the nodes that answer now, here and (through the bus) on the other instances. The round asks those.
 */
export interface Admission {
  quorum: bigint;
  nodes: readonly Asked[];
}

/** A round another instance opened: answers from the nodes here go back to `origin`, and its result comes from there. */
interface RemoteRound {
  origin: string;
  asked: Set<string>;
  forwarded: Set<string>;
  /** Answers are forwarded until then (`performance.now()`); the entry is kept a little longer, for the result. */
  until: number;
}

/** The failures of rounds that ended before their deadline: every node asked answered, none with a quorum's struct. */
const endedAnswered = new WeakSet<Error>();

/**
 * How long a relayed round's entry outlives its deadline, so that its result, published by the origin at
 * the deadline at the latest, still finds whom it is for (at least the bus's clock skew allowance).
 */
const RESULT_GRACE_MS = 5_000;

interface Round<S> {
  id: string;
  kind: RoundKind<S>;
  asked: Set<string>;
  answered: Set<string>;
  /** Nodes asked here that went silent before answering: the round no longer waits for them. */
  gaveUp: Set<string>;
  groups: Map<string, Group<S>>;
  quorum: bigint;
  /** Signatures left out for naming more licenses than the verifier takes in one attestation. */
  oversized: number;
  winner?: string;
  settle: (result: Attested<S, unknown> | Error) => void;
  /** When the request went out (`performance.now()`), and when each signer's answer arrived after it. */
  sentAt: number;
  elapsed: Map<string, number>;
  /** Signatures of the winning struct that came after it won, by licensed signers: in the result too. */
  late: Map<string, NodeSignature>;
  /** Answers being judged (their licenses read): the result waits for them. */
  judging: number;
  /** Whether the result was sent (or skipped): once per round. */
  resultSent: boolean;
  /** The deadline came: a judgement still reading licenses then cannot complete a quorum. */
  closed: boolean;
}

/**
 * Attestation rounds: one query fanned out to every admitted node, its signed answers grouped by the
 * struct they sign, done as soon as some of the signatures of one struct name `quorum` distinct live licenses
 * and at most the verifier's `MAX_LICENSES` in all (`quorum-set.ts` chooses them). Two kinds
 * (`round-kinds.ts`): a balance, and a condition's verdict; they differ only in the request, the struct and
 * which of its fields are asked, and share everything else here. A signature counts only when it recovers
 * to the session's burner over the struct and the license ids the node listed (each node signs its own
 * list, which the hub passes on exactly as signed), signs the very question asked (for a balance: chain,
 * owner, asset, pinned position, issue time; for a condition: every field), and every license it lists is
 * delegated to that burner and live now: a list that is partly stale cannot be trimmed without the
 * node's signature, so it does not count at all. Each round is kept until its deadline so that late
 * answers are still classified; nodes asked but never heard from are then counted silent.
 *
 * A node whose session here has gone silent (no pong past the ping interval, `sessions.ts`) is neither asked
 * nor counted: a round short of the quorum without it fails at once, naming the licenses it holds, and a
 * round that asked it before it went quiet stops waiting for it (`silent`).
 *
 * With a bus (several instances of one hub), a round also asks the nodes connected to the other live
 * instances: it is published to them, each sends it to its own sessions among those asked, and forwards
 * their answers, with the burner its session authenticated, to this instance, which judges them as its own.
 *
 * Once a round is over (every node asked has answered, or the deadline came), each signer of the winning
 * struct gets its result (`roundDone`): the signatures of that struct, each with its time from the request,
 * from which the node tallies its peers (docs/verification.md, "Its peers, through the hub's rounds").
 */
export class AttestationRounds {
  // Open rounds of both kinds, by id: each carries its kind, which reads the answers to it.
  readonly #rounds = new Map<string, Round<unknown>>();
  readonly #remote = new Map<string, RemoteRound>();
  private readonly options: RoundsOptions;
  readonly #results: TokenBucket;

  constructor(options: RoundsOptions) {
    this.options = options;
    const resultsPerSecond = options.resultsPerSecond ?? DEFAULT_RESULTS_PER_SECOND;
    this.#results = new TokenBucket(resultsPerSecond, resultsPerSecond);
  }

  /** Rounds opened here and not over yet: a round lasts until its deadline, even once answered. */
  get open(): number {
    return this.#rounds.size;
  }

  /**
   * Whether a round can reach the quorum now: the live licenses of the nodes that answer (those here that are
   * not silent, and those the other instances hold) against the registry's quorum. Short of it, a
   * `QuorumNotReachedError` naming them, at once: a caller asks this beside its reads of the sources, so that
   * a network that cannot answer is refused without waiting for them (or reading them at all).
   */
  async admit(chain: RoundKind<unknown>["label"]): Promise<Admission> {
    // The L2 not answering is a reason to retry, like a missing quorum, not an internal error.
    const [quorum, { nodes, silent, busDown }] = await Promise.all([
      this.options.checker.quorum().catch(() => {
        this.options.metrics.attestationRounds.inc({ chain, outcome: "unavailable" });
        throw new QuorumNotReachedError("Attestation unavailable: the L2 registry could not be read");
      }),
      this.#nodes(),
    ]);
    const connectedLicenses = new Set(nodes.flatMap((node) => node.licenseIds));
    if (BigInt(connectedLicenses.size) < quorum) {
      this.options.metrics.attestationRounds.inc({ chain, outcome: "unavailable" });
      const elsewhere =
        busDown === true ? "; the hub bus (Redis) is unreachable, so nodes connected to other API processes are not counted" : "";
      throw new QuorumNotReachedError(`Attestation unavailable: ${unavailable(connectedLicenses, quorum, silent)}${elsewhere}`);
    }
    return { quorum, nodes };
  }

  /** A balance round among the nodes `admission` holds: resolves with the first struct a quorum signed; throws `QuorumNotReachedError`. */
  gather(query: AttestQuery, deadlineMs: number, admission: Admission): Promise<Attested<BalanceAttestation, string>> {
    return this.#gather(balanceRound(query), deadlineMs, admission);
  }

  /** A condition round among the nodes `admission` holds: resolves with the first verdict a quorum signed; throws `QuorumNotReachedError`. */
  gatherCondition(
    query: ConditionQuery,
    deadlineMs: number,
    admission: Admission,
  ): Promise<Attested<ConditionAttestation, LeafEvidence[]>> {
    return this.#gather(conditionRound(query), deadlineMs, admission);
  }

  async #gather<S, E>(kind: RoundKind<S, E>, deadlineMs: number, { quorum, nodes }: Admission): Promise<Attested<S, E>> {
    const { stats, bus } = this.options;
    const chain = kind.label;
    const started = performance.now();
    const id = randomBytes(12).toString("hex");
    const result = new Promise<Attested<S, E> | Error>((resolve) => {
      const round: Round<S> = {
        id,
        kind,
        asked: new Set(nodes.map((node) => node.burner)),
        answered: new Set(),
        gaveUp: new Set(),
        groups: new Map(),
        quorum,
        oversized: 0,
        settle: resolve as Round<S>["settle"],
        sentAt: performance.now(), // after the quorum and presence reads: the requests go out next
        elapsed: new Map(),
        late: new Map(),
        judging: 0,
        resultSent: false,
        closed: false,
      };
      this.#rounds.set(id, round as unknown as Round<unknown>);
      setTimeout(() => {
        resolve(new QuorumNotReachedError(`Attestation quorum not reached within ${deadlineMs} ms: ${shortfall(round)}`));
        this.#finish(round);
      }, deadlineMs).unref();
    });
    const message = kind.request(id);
    for (const node of nodes) {
      stats.asked(node.burner);
      node.send?.(message);
    }
    const elsewhere = nodes.filter((node) => node.send === undefined).map((node) => node.burner);
    if (bus !== undefined && elsewhere.length > 0) {
      const relayed: RelayedRound = { origin: bus.instanceId, deadlineMs, burners: elsewhere, request: message };
      // Unpublished, the round goes on with the nodes here: the others are counted silent at the deadline.
      bus
        .openRound(relayed)
        .catch((error: unknown) => this.options.logger?.warn({ error: (error as Error)?.message }, "round not relayed"));
    }
    const outcome = await result;
    if (outcome instanceof Error) {
      this.options.metrics.attestationRounds.inc({ chain, outcome: endedAnswered.has(outcome) ? "no-quorum" : "timeout" });
      throw outcome;
    }
    this.options.metrics.attestationRounds.inc({ chain, outcome: "quorum" });
    this.options.metrics.attestationLatency.observe({ chain }, (performance.now() - started) / 1000);
    return outcome;
  }

  /**
   * A round another instance opened (through the bus): asks the nodes here among those it named, and
   * remembers where their answers go until its deadline.
   */
  relayed(round: RelayedRound): void {
    const asked = new Set(round.burners);
    const here = this.options.sessions().filter((session) => asked.has(session.burner));
    if (here.length === 0) return;
    this.#remote.set(round.request.id, { origin: round.origin, asked, forwarded: new Set(), until: performance.now() + round.deadlineMs });
    setTimeout(() => this.#remote.delete(round.request.id), round.deadlineMs + RESULT_GRACE_MS).unref();
    for (const session of here) session.send(round.request);
  }

  /**
   * The result of a round another instance opened: passed to the sessions here that it lists and whose
   * answers this instance forwarded for that round. A result for a round not relayed here reaches nobody.
   */
  relayedDone({ origin, recipients, done }: RelayedDone): void {
    const remote = this.#remote.get(done.id);
    // Only the instance that opened the round knows its result.
    if (remote === undefined || remote.origin !== origin) return;
    const listed = new Set(recipients);
    for (const session of this.options.sessions())
      if (listed.has(session.burner) && remote.forwarded.has(session.burner)) session.send(done);
    this.#remote.delete(done.id); // one result per round
  }

  /**
   * The session here of `burner` has gone silent: the rounds opened here that asked it and have no answer from
   * it stop waiting for it, so one that cannot reach the quorum without it fails now, not at its deadline. It
   * is still counted silent at the deadline, and an answer it sends before then is judged as usual.
   */
  silent(burner: string): void {
    for (const round of this.#rounds.values()) {
      if (!round.asked.has(burner) || round.answered.has(burner)) continue;
      round.gaveUp.add(burner);
      this.#maybeDone(round);
    }
  }

  /**
   * A node's answer to round `message.id`: `burner` is the one its session authenticated (here, or on the
   * instance that forwarded it). Judged here when this instance opened the round; forwarded to the instance
   * that did when it is another's.
   */
  async answer(burner: string, message: NodeAnswer): Promise<void> {
    const remote = this.#remote.get(message.id);
    if (remote !== undefined && !this.#rounds.has(message.id)) {
      if (!remote.asked.has(burner) || remote.forwarded.has(burner) || performance.now() > remote.until) return;
      remote.forwarded.add(burner);
      return this.options.bus?.forwardAnswer(remote.origin, { burner, answer: message });
    }
    return this.#judge({ burner }, message);
  }

  async #judge(session: { burner: string }, message: NodeAnswer): Promise<void> {
    const round = this.#rounds.get(message.id);
    if (round === undefined || !round.asked.has(session.burner) || round.answered.has(session.burner)) return;
    round.answered.add(session.burner);
    round.gaveUp.delete(session.burner);
    // When it reached the hub, before anything is awaited: a relayed answer's time includes the bus both ways.
    round.elapsed.set(session.burner, Math.round(performance.now() - round.sentAt));
    round.judging += 1;
    try {
      await this.#judgeAnswer(round, session.burner, message);
    } finally {
      round.judging -= 1;
      this.#maybeDone(round);
    }
  }

  async #judgeAnswer<S>(round: Round<S>, burner: string, message: NodeAnswer): Promise<void> {
    if (message.type === "refusal") return this.#count(burner, "refused");
    const { kind } = round;
    // The frame was validated on arrival; a signature of the other kind answers another question.
    const attestation = message.type === kind.kind.frameType ? kind.kind.fromMessage(message.message) : undefined;
    // The node's own list, in its order: the signature covers exactly these ids.
    const licenseIds = message.licenseIds.map(BigInt);
    // The verifier refuses any set holding such a signature: it can never be part of an answer.
    if (licenseIds.length > MAX_ATTESTATION_LICENSES) {
      round.oversized += 1;
      return this.#count(burner, "invalid");
    }
    if (
      attestation === undefined ||
      !kind.asks(attestation) ||
      new Set(licenseIds).size !== licenseIds.length ||
      recoverAttestationSigner(kind.kind, this.options.domain, attestation, licenseIds, message.signature) !== burner
    )
      return this.#count(burner, "invalid");
    const read = kind.evidence(attestation, message);
    if (read === "contradicts") return this.#count(burner, "invalid");
    const digest = attestationStructHash(kind.kind, attestation);
    if (round.winner !== undefined) return this.#late(round, digest, { signer: burner, licenseIds, signature: message.signature });
    const countable = await this.options.checker.countable(burner, licenseIds).catch(() => [] as bigint[]);
    if (countable.length !== licenseIds.length) return this.#count(burner, "unlicensed");
    // The licenses were read past the deadline: the client has its 503, this answer came too late to count.
    if (round.closed && round.winner === undefined) return this.#count(burner, "late");
    if (round.winner !== undefined) {
      // Checked already: licensed, and late.
      if (digest === round.winner) round.late.set(burner, { signer: burner, licenseIds, signature: message.signature });
      return this.#count(burner, digest === round.winner ? "late" : "disagreed");
    }
    let group = round.groups.get(digest);
    if (group === undefined) {
      group = { attestation, signatures: new Map(), licenses: new Set() };
      round.groups.set(digest, group);
    }
    // A license delegated to one burner cannot be live for another; a list that overlaps an earlier
    // signer's would make the verifier refuse the whole set, so it is left out.
    if (licenseIds.some((id) => group.licenses.has(id))) return this.#count(burner, "invalid");
    for (const id of licenseIds) group.licenses.add(id);
    group.signatures.set(burner, { signer: burner, licenseIds, signature: message.signature });
    group.evidence ??= read.evidence;
    if (BigInt(group.licenses.size) < round.quorum) return;
    // Agreeing signatures may name more licenses in all than one attestation can carry: settle on a set
    // the verifier accepts, or wait for an answer that makes one.
    const agreeing = [...group.signatures.values()];
    const chosen = chooseQuorumSet(
      agreeing.map((signature) => signature.licenseIds.length),
      Number(round.quorum),
      MAX_ATTESTATION_LICENSES,
    );
    if (chosen === undefined) return;

    round.winner = digest;
    for (const [groupDigest, other] of round.groups) {
      for (const signer of other.signatures.keys()) this.#count(signer, groupDigest === digest ? "agreed" : "disagreed");
    }
    // Sorted by signer: one canonical order for the verifier and for clients comparing answers.
    const signatures = chosen.map((index) => agreeing[index]).sort((a, b) => (BigInt(a.signer) < BigInt(b.signer) ? -1 : 1));
    round.settle({ attestation: group.attestation, signatures, evidence: group.evidence });
  }

  /**
   * A valid signature that came after the round was won: counted late when it signs the winner (and, once its
   * licenses are checked as a quorum's would be, listed in the result), else disagreed.
   */
  async #late<S>(round: Round<S>, digest: string, signature: NodeSignature): Promise<void> {
    if (digest !== round.winner) return this.#count(signature.signer, "disagreed");
    this.#count(signature.signer, "late");
    const countable = await this.options.checker.countable(signature.signer, signature.licenseIds).catch(() => [] as bigint[]);
    if (countable.length === signature.licenseIds.length) round.late.set(signature.signer, signature);
  }

  /**
   * Once every node asked has answered (or gone silent) and every answer is judged: the result goes out, or,
   * without a winner, the round fails now rather than at its deadline (no answer is left to make a quorum).
   */
  #maybeDone<S>(round: Round<S>): void {
    if (round.judging !== 0 || round.answered.size + round.gaveUp.size !== round.asked.size) return;
    if (round.winner === undefined && !round.closed) {
      const everyone =
        round.gaveUp.size === 0
          ? "every node asked has answered"
          : `every node asked has answered but ${round.gaveUp.size} gone silent (no pong past the ping interval)`;
      const failure = new QuorumNotReachedError(`Attestation quorum not reached: ${everyone}; ${shortfall(round)}`);
      endedAnswered.add(failure);
      round.settle(failure);
      // The client has its 503: what a silent node that comes back sends before the deadline counts late.
      round.closed = true;
    }
    this.#sendDone(round);
  }

  /**
   * The round's result, to each signer of its winning struct (none when it has no winner): its signatures,
   * fastest first, as many as fit one frame. Sent here to the sessions here, and through the bus for the
   * others. Sampled by `resultsPerSecond`: a round over the budget sends nothing to anyone.
   */
  #sendDone<S>(round: Round<S>): void {
    if (round.resultSent || round.winner === undefined) return;
    round.resultSent = true;
    if (!this.#results.take()) {
      this.options.metrics.attestationRoundResults.inc({ outcome: "sampled-out" });
      return;
    }
    const signed = [...(round.groups.get(round.winner)?.signatures.values() ?? []), ...round.late.values()].map((signature) => ({
      signature,
      elapsedMs: round.elapsed.get(signature.signer) ?? 0,
    }));
    const { done, recipients } = roundDoneFrame(round.id, signed);
    const elsewhere: string[] = [];
    const here = new Map(this.options.sessions().map((session) => [session.burner, session]));
    for (const burner of recipients) {
      const session = here.get(burner);
      if (session !== undefined) session.send(done);
      else elsewhere.push(burner);
    }
    this.options.metrics.attestationRoundResults.inc({ outcome: "sent" });
    const { bus } = this.options;
    if (bus === undefined || elsewhere.length === 0) return;
    bus
      .publishDone({ origin: bus.instanceId, recipients: elsewhere, done })
      .catch((error: unknown) => this.options.logger?.warn({ error: (error as Error)?.message }, "round result not relayed"));
  }

  /**
   * The nodes to ask: the sessions here that answer, and those the other live instances hold (by burner: a
   * node that moved between instances and shows on both is asked here; the others publish only the sessions
   * that answer). Without the bus's answer (Redis down), the sessions here alone. Beside them, the silent
   * sessions here (of burners not asked elsewhere), for the 503's reason.
   */
  async #nodes(): Promise<{ nodes: Asked[]; silent: NodeSession[]; busDown?: boolean }> {
    const sessions = this.options.sessions();
    const here: Asked[] = sessions.filter((session) => !session.silent);
    const silent = sessions.filter((session) => session.silent);
    const { bus } = this.options;
    if (bus === undefined) return { nodes: here, silent };
    let busDown = false;
    const peers = await bus.peerSessions().catch((error: unknown) => {
      // An outage the bus reported once already (redis-bus.ts) is not logged again for every round.
      if ((error as { code?: unknown })?.code === "HUB_BUS_UNREACHABLE") busDown = true;
      else this.options.logger?.warn({ error: (error as Error)?.message }, "the other instances' sessions could not be read");
      return [];
    });
    const nodes = new Map(here.map((node) => [node.burner, node]));
    for (const peer of peers)
      if (!nodes.has(peer.burner)) nodes.set(peer.burner, { burner: peer.burner, licenseIds: peer.licenseIds.map(BigInt) });
    return { nodes: [...nodes.values()], silent: silent.filter((session) => !nodes.has(session.burner)), busDown };
  }

  #count(burner: string, outcome: AnswerOutcome): void {
    this.options.stats.answered(burner, outcome);
    this.options.metrics.attestationAnswers.inc({ outcome });
  }

  /**
   * At the deadline: nodes asked but never heard from are silent; signers of a round without quorum are left
   * unjudged. The result goes now if it has not yet (without the answers still being judged).
   */
  #finish<S>(round: Round<S>): void {
    this.#rounds.delete(round.id);
    round.closed = true;
    for (const burner of round.asked) if (!round.answered.has(burner)) this.#count(burner, "silent");
    this.#sendDone(round);
    // Without a winner now, there is none: the client was answered 503, and no result ever goes out.
    round.resultSent = true;
  }
}

/**
 * A round's result: `signed` fastest first, as many as fit `MAX_DONE_SIGNATURES` and `MAX_FRAME_BYTES`, and
 * the signers listed (each gets the frame: a signer cut out of it gets none).
 */
export function roundDoneFrame(
  id: string,
  signed: ReadonlyArray<{ signature: NodeSignature; elapsedMs: number }>,
): { done: RoundDone; recipients: Set<string> } {
  const done: RoundDone = { type: "roundDone", id, signatures: [], truncated: false };
  const recipients = new Set<string>();
  const fastestFirst = [...signed].sort((a, b) => a.elapsedMs - b.elapsedMs);
  for (const { signature, elapsedMs } of fastestFirst.slice(0, MAX_DONE_SIGNATURES)) {
    // An answer judged a little after a 60-s deadline (event-loop lag) stays within what a node accepts.
    const entry = {
      licenseIds: signature.licenseIds.map(String),
      signature: signature.signature,
      elapsedMs: Math.min(elapsedMs, MAX_ROUND_DEADLINE_MS),
    };
    done.signatures.push(entry);
    if (Buffer.byteLength(JSON.stringify(done)) > MAX_FRAME_BYTES) {
      done.signatures.pop();
      break;
    }
    recipients.add(signature.signer);
  }
  done.truncated = done.signatures.length < signed.length;
  return { done, recipients };
}

/**
 * Round results an instance sends a second by default: every round of the local stack; at most five 16 KiB
 * frames a second from each instance to a node (a node on a hub of K instances may get 5K).
 */
export const DEFAULT_RESULTS_PER_SECOND = 5;

/**
 * Why a round cannot start, for the 503: the live licenses of the nodes that answer, against the quorum, and
 * those of nodes connected here but silent (for how long), which are not counted.
 */
function unavailable(counted: ReadonlySet<bigint>, quorum: bigint, silent: readonly NodeSession[]): string {
  const held = new Set(silent.flatMap((session) => session.licenseIds).filter((id) => !counted.has(id)));
  if (held.size === 0) return `${counted.size} live license(s) connected, quorum is ${quorum}`;
  const now = performance.now();
  const seconds = silent.map((session) => Math.floor((now - session.lastHeardAt) / 1000));
  const [least, most] = [Math.min(...seconds), Math.max(...seconds)];
  const silentFor = least === most ? `${least} s` : `${least} to ${most} s`;
  return `${counted.size} live license(s) connected and answering, quorum is ${quorum} (${held.size} more connected but silent for ${silentFor})`;
}

/**
 * Why a round ended without an answer, for the 503: how far the best-supported struct got, whether its
 * signatures reached the quorum only beyond what one attestation can carry, and how many answers were
 * left out for naming too many licenses.
 */
function shortfall<S>(round: Round<S>): string {
  const most = Math.max(0, ...[...round.groups.values()].map((group) => group.licenses.size));
  const reasons = [
    BigInt(most) >= round.quorum
      ? `${most} licenses agreed, but no set of their signatures reaches quorum ${round.quorum} within the verifier's ${MAX_ATTESTATION_LICENSES} licenses`
      : `the most licenses agreeing on one answer was ${most} of quorum ${round.quorum}`,
  ];
  if (round.oversized > 0)
    reasons.push(`${round.oversized} answer(s) named more than ${MAX_ATTESTATION_LICENSES} licenses and were left out`);
  return reasons.join("; ");
}

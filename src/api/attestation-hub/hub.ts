import type { FastifyInstance } from "fastify";
import { getAddress } from "ethers";

import { attestationDomain } from "../../common/attestation.ts";
import { type AttestationDomain, type BalanceAttestation } from "@avn/protocol/attestation";
import type { ConditionAttestation } from "@avn/protocol/conditions";
import type { ApiMetrics } from "../metrics.ts";
import { L2HeadFollower } from "./l2-head.ts";
import { LicenseChecker } from "./license-checker.ts";
import { NodeStats } from "./node-stats.ts";
import { hubName, type AttestQuery, type ConditionQuery } from "../../common/hub-protocol.ts";
import type { HubBus } from "./bus/bus.ts";
import { AttestationRounds, QuorumNotReachedError, type Admission, type Attested } from "./rounds.ts";
import type { LeafEvidence } from "./round-kinds.ts";
import { HubSessions, type HubAdmissionOptions } from "./sessions.ts";

export interface AttestationHubOptions {
  l2RpcUrl: string;
  /** The L2's WebSocket JSON-RPC URL: the hub follows its new heads and pins `issuedAt` to the head's time. */
  l2WsUrl: string;
  nodeRegistry: string;
  attestationVerifier: string;
  /** This deployment's label: with the L2 chain id and the verifier, the hub's name (`hubName`), in the login challenge. */
  hubLabel: string;
  /** Limits on connections not logged in yet and on logins (passed to the sessions as they are). */
  admission?: HubAdmissionOptions;
  /**
   * Joins this instance to the others of the same hub (several API processes: `RedisHubBus`, or a
   * cluster's `PrimaryHubBus`), built once the hub's name is known (its Redis keys are namespaced by it).
   * Absent: this process is the whole hub.
   */
  bus?: (hubName: string) => Promise<HubBus>;
  /** Quorum deadline of one attested query. */
  deadlineMs: number;
  /** Round results sent a second (`AttestationRounds`); absent: its default. */
  resultsPerSecond?: number;
  /** Blocks below the Ethereum head an attested answer is pinned to. */
  evmConfirmations: number;
  recheckMs: number;
  /**
   * How often the hub pings each node (`ATTESTATION_PING_MS`; absent: 15 s). A node unheard from for longer
   * than this and `PONG_ALLOWANCE_MS` is silent: neither asked nor counted nor published, until it answers.
   */
  pingMs?: number;
  metrics: ApiMetrics;
  logger: import("pino").Logger;
}

/**
 * The attestation hub (docs/api.md, "Attested answers"): the WebSocket endpoint circuit nodes connect out
 * to, the admitted sessions, and the rounds that gather a quorum of node signatures for one query (a
 * balance) or one verdict (a holding condition).
 */
export class AttestationHub {
  readonly name: string;
  readonly domain: AttestationDomain;
  readonly deadlineMs: number;
  readonly evmConfirmations: number;
  readonly stats: NodeStats;
  readonly #checker: LicenseChecker;
  readonly #sessions: HubSessions;
  readonly #rounds: AttestationRounds;
  readonly #head: L2HeadFollower;
  readonly #bus: HubBus | undefined;
  #presenceScheduled = false;
  #closed = false;

  private constructor(
    options: AttestationHubOptions,
    checker: LicenseChecker,
    chainId: bigint,
    head: L2HeadFollower,
    name: string,
    bus: HubBus | undefined,
  ) {
    this.name = name;
    this.domain = attestationDomain(chainId, getAddress(options.attestationVerifier));
    this.deadlineMs = options.deadlineMs;
    this.evmConfirmations = options.evmConfirmations;
    this.#checker = checker;
    this.#head = head;
    this.#bus = bus;
    this.stats = new NodeStats({ shared: bus?.stats, onSessionsChanged: bus === undefined ? undefined : () => this.#schedulePresence() });
    this.#sessions = new HubSessions({
      hubName: name,
      chainId,
      checker,
      stats: this.stats,
      metrics: options.metrics,
      logger: options.logger,
      recheckMs: options.recheckMs,
      pingMs: options.pingMs,
      admission: options.admission,
      onAnswer: (session, message) => void this.#rounds.answer(session.burner, message),
      onSilence: (session, silent) => {
        if (silent) this.#rounds.silent(session.burner);
        // The other instances count what this one publishes: a silent node drops out of it, and comes back.
        if (bus !== undefined) this.#schedulePresence();
      },
    });
    this.#rounds = new AttestationRounds({
      domain: this.domain,
      checker,
      stats: this.stats,
      metrics: options.metrics,
      sessions: () => this.#sessions.list(),
      bus,
      resultsPerSecond: options.resultsPerSecond,
      logger: options.logger,
    });
  }

  /** Reads the L2 chain id (the EIP-712 domain's) and the L2 head, starts following the head, and builds the hub. */
  static async create(options: AttestationHubOptions): Promise<AttestationHub> {
    const checker = new LicenseChecker(options);
    try {
      const chainId = await checker.chainId();
      const name = hubName(options.hubLabel, chainId, options.attestationVerifier);
      const head = new L2HeadFollower({ wsUrl: options.l2WsUrl, rpcUrl: options.l2RpcUrl, chainId, logger: options.logger });
      await head.start(); // stops itself when its first read fails
      let bus: HubBus | undefined;
      try {
        bus = await options.bus?.(name);
        const hub = new AttestationHub(options, checker, chainId, head, name, bus);
        await bus?.start({
          round: (round) => hub.#rounds.relayed(round),
          answer: ({ burner, answer }) => void hub.#rounds.answer(burner, answer),
          done: (done) => hub.#rounds.relayedDone(done),
        });
        return hub;
      } catch (error) {
        head.stop();
        await bus?.close();
        throw error;
      }
    } catch (error) {
      checker.destroy();
      throw error;
    }
  }

  /** Serves `/attest/ws` on `app`'s HTTP server and `GET /attest/nodes`; closes the sessions with the server. */
  register(app: FastifyInstance): void {
    this.#sessions.attach(app.server);
    app.addHook("preClose", async () => {
      this.#closed = true;
      await this.#bus?.close(); // first: the other instances stop counting this one's nodes
      await this.#sessions.close();
      this.#head.stop();
      this.#checker.destroy();
    });
    // Every instance's nodes and counters: the same answer from any instance.
    app.get("/attest/nodes", { schema: { hide: true } }, async () => ({
      domain: { ...this.domain, chainId: Number(this.domain.chainId) },
      nodes: await this.stats.listAll(),
    }));
  }

  /**
   * Rounds opened by this instance and not over: each lasts until its deadline (when silent nodes are counted
   * and, if it has not gone yet, its result is sent), however soon its answer came.
   */
  get openRounds(): number {
    return this.#rounds.open;
  }

  /**
   * The quorum and the nodes that answer now, or `QuorumNotReachedError` at once when their live licenses fall
   * short of it (`AttestationRounds.admit`). Asked first, beside the reads that pin the question: a round
   * that cannot be formed is refused without waiting for them.
   */
  admit(chain: "evm" | "svm" | "condition"): Promise<Admission> {
    return this.#rounds.admit(chain);
  }

  /**
   * Fans `query` out to the nodes `admission` holds and resolves with the first struct signed by a quorum,
   * with the QueryResult bytes one of its signers read (checked against the signed hash); throws
   * `QuorumNotReachedError`.
   */
  gather(query: AttestQuery, admission: Admission): Promise<Attested<BalanceAttestation, string>> {
    return this.#rounds.gather(query, this.deadlineMs, admission);
  }

  /**
   * Fans a condition out to the nodes `admission` holds and resolves with the first verdict a quorum signed
   * (each node reads every leaf itself and signs the verdict it reads), with one signer's readings of the
   * leaves (checked against that verdict); throws `QuorumNotReachedError`.
   */
  gatherCondition(query: ConditionQuery, admission: Admission): Promise<Attested<ConditionAttestation, LeafEvidence[]>> {
    return this.#rounds.gatherCondition(query, this.deadlineMs, admission);
  }

  /**
   * The issue time to pin: the latest L2 head's timestamp (chain time, which `AttestationVerifier` compares
   * with `block.timestamp`), followed by subscription; read over HTTP while the subscription is down. When
   * the L2 cannot be read at all, a `QuorumNotReachedError` (503, retry) like any other unavailability.
   */
  issuedAt(): Promise<bigint> {
    return this.#head.issuedAt().catch(() => {
      throw new QuorumNotReachedError("Attestation unavailable: the L2 head cannot be read; retry");
    });
  }

  /**
   * The burners of the sessions this instance holds that have gone silent (past the ping interval and its
   * allowance): neither asked nor counted until they answer again.
   */
  silentNodes(): string[] {
    return this.#sessions
      .list()
      .filter((session) => session.silent)
      .map((session) => session.burner);
  }

  /** Publishes this instance's answering sessions (silent ones left out) once per tick in which they changed. */
  #schedulePresence(): void {
    if (this.#presenceScheduled || this.#closed) return;
    this.#presenceScheduled = true;
    setImmediate(() => {
      this.#presenceScheduled = false;
      if (this.#closed) return;
      this.#bus?.publishSessions(
        this.#sessions.answering().map((session) => ({
          burner: session.burner,
          licenseIds: session.licenseIds.map(String),
          since: this.stats.get(session.burner)?.connectedSince ?? new Date().toISOString(),
        })),
      );
    });
  }

  /** Runs the periodic license re-check now (tests). */
  recheck(): Promise<void> {
    return this.#sessions.recheck();
  }
}

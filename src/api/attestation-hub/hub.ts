import type { FastifyInstance } from "fastify";
import { getAddress } from "ethers";

import { attestationDomain } from "../../common/attestation.ts";
import { type AttestationDomain } from "@avn/protocol/attestation";
import type { ApiMetrics } from "../metrics.ts";
import { L2HeadFollower } from "./l2-head.ts";
import { LicenseChecker } from "./license-checker.ts";
import { NodeStats } from "./node-stats.ts";
import type { AttestQuery } from "../../common/hub-protocol.ts";
import { AttestationRounds, QuorumNotReachedError, type Attested } from "./rounds.ts";
import { HubSessions } from "./sessions.ts";

export interface AttestationHubOptions {
  l2RpcUrl: string;
  /** The L2's WebSocket JSON-RPC URL: the hub follows its new heads and pins `issuedAt` to the head's time. */
  l2WsUrl: string;
  nodeRegistry: string;
  attestationVerifier: string;
  /** Named in the login challenge, so a node's login is good for this hub only. */
  hubName: string;
  /** Quorum deadline of one attested query. */
  deadlineMs: number;
  /** Blocks below the Ethereum head an attested answer is pinned to. */
  evmConfirmations: number;
  recheckMs: number;
  metrics: ApiMetrics;
  logger: import("pino").Logger;
}

/**
 * The attestation hub (docs/api.md, "Attested answers"): the WebSocket endpoint circuit nodes connect out
 * to, the admitted sessions, and the rounds that gather a quorum of node signatures for one query.
 */
export class AttestationHub {
  readonly domain: AttestationDomain;
  readonly deadlineMs: number;
  readonly evmConfirmations: number;
  readonly stats = new NodeStats();
  readonly #checker: LicenseChecker;
  readonly #sessions: HubSessions;
  readonly #rounds: AttestationRounds;
  readonly #head: L2HeadFollower;

  private constructor(options: AttestationHubOptions, checker: LicenseChecker, chainId: bigint, head: L2HeadFollower) {
    this.domain = attestationDomain(chainId, getAddress(options.attestationVerifier));
    this.deadlineMs = options.deadlineMs;
    this.evmConfirmations = options.evmConfirmations;
    this.#checker = checker;
    this.#head = head;
    this.#sessions = new HubSessions({
      hubName: options.hubName,
      chainId,
      checker,
      stats: this.stats,
      metrics: options.metrics,
      logger: options.logger,
      recheckMs: options.recheckMs,
      onAnswer: (session, message) => void this.#rounds.answer(session, message),
    });
    this.#rounds = new AttestationRounds({
      domain: this.domain,
      checker,
      stats: this.stats,
      metrics: options.metrics,
      sessions: () => this.#sessions.list(),
    });
  }

  /** Reads the L2 chain id (the EIP-712 domain's) and the L2 head, starts following the head, and builds the hub. */
  static async create(options: AttestationHubOptions): Promise<AttestationHub> {
    const checker = new LicenseChecker(options);
    try {
      const chainId = await checker.chainId();
      const head = new L2HeadFollower({ wsUrl: options.l2WsUrl, rpcUrl: options.l2RpcUrl, chainId, logger: options.logger });
      await head.start(); // stops itself when its first read fails
      return new AttestationHub(options, checker, chainId, head);
    } catch (error) {
      checker.destroy();
      throw error;
    }
  }

  /** Serves `/attest/ws` on `app`'s HTTP server and `GET /attest/nodes`; closes the sessions with the server. */
  register(app: FastifyInstance): void {
    this.#sessions.attach(app.server);
    app.addHook("preClose", async () => {
      await this.#sessions.close();
      this.#head.stop();
      this.#checker.destroy();
    });
    app.get("/attest/nodes", { schema: { hide: true } }, async () => ({
      domain: { ...this.domain, chainId: Number(this.domain.chainId) },
      nodes: this.stats.list(),
    }));
  }

  /** Fans `query` out and resolves with the first struct signed by a quorum; throws `QuorumNotReachedError`. */
  gather(query: AttestQuery): Promise<Attested> {
    return this.#rounds.gather(query, this.deadlineMs);
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

  /** Runs the periodic license re-check now (tests). */
  recheck(): Promise<void> {
    return this.#sessions.recheck();
  }
}

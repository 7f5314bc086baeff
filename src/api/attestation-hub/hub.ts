import type { FastifyInstance } from "fastify";
import { getAddress } from "ethers";

import { attestationDomain, type AttestationDomain } from "../../common/attestation.ts";
import type { ApiMetrics } from "../metrics.ts";
import { LicenseChecker } from "./license-checker.ts";
import { NodeStats } from "./node-stats.ts";
import type { AttestQuery } from "../../common/hub-protocol.ts";
import { AttestationRounds, type Attested } from "./rounds.ts";
import { HubSessions } from "./sessions.ts";

export interface AttestationHubOptions {
  l2RpcUrl: string;
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

  private constructor(options: AttestationHubOptions, checker: LicenseChecker, chainId: bigint) {
    this.domain = attestationDomain(chainId, getAddress(options.attestationVerifier));
    this.deadlineMs = options.deadlineMs;
    this.evmConfirmations = options.evmConfirmations;
    this.#checker = checker;
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

  /** Reads the L2 chain id (the EIP-712 domain's) and builds the hub. */
  static async create(options: AttestationHubOptions): Promise<AttestationHub> {
    const checker = new LicenseChecker(options);
    try {
      return new AttestationHub(options, checker, await checker.chainId());
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

  /** Runs the periodic license re-check now (tests). */
  recheck(): Promise<void> {
    return this.#sessions.recheck();
  }
}

import type { FastifyInstance } from "fastify";

import { ApiError } from "../api-error.ts";
import { failureFields } from "../failure-log.ts";
import type { NetworkService } from "../network/network-service.ts";

const integer = { type: "integer" } as const;
const bps = { type: "integer", minimum: 0, maximum: 10_000 } as const;

const nodeSchema = {
  type: "object",
  properties: {
    licenseId: integer,
    operator: { type: ["string", "null"], description: "The burner the license is delegated to now (lower-case), or null" },
    live: { type: "boolean" },
    uptimeBps: { ...bps, description: "Complete liveness windows of the epoch holding a heartbeat of the license's operator" },
    participationBps: { ...bps, description: "Jobs answered of the jobs opened while the license was live" },
    accuracyBps: { ...bps, description: "Votes equal to the quorum's answer, of the votes on finalized jobs" },
    medianVoteDelayBlocks: { ...integer, minimum: 0 },
    scoreBps: { ...bps, description: "docs/verification.md, Quality of service: the published formula" },
    jobsAsked: integer,
    votes: integer,
    agreed: integer,
    points: integer,
    disagreed: integer,
    challengeJobsAsked: {
      ...integer,
      description: "Jobs opened by a challenger (CHALLENGER_ROLE) while the license was live: its measured capacity",
    },
    challengeJobsAnswered: integer,
    challengeMedianVoteDelayBlocks: integer,
    attestations: {
      ...integer,
      description: "Attested answers issued in the epoch and recorded on-chain with the license's signature (published, not paid)",
    },
  },
  required: [
    "licenseId",
    "operator",
    "live",
    "uptimeBps",
    "participationBps",
    "accuracyBps",
    "medianVoteDelayBlocks",
    "scoreBps",
    "jobsAsked",
    "votes",
    "agreed",
    "points",
    "disagreed",
    "challengeJobsAsked",
    "challengeJobsAnswered",
    "challengeMedianVoteDelayBlocks",
    "attestations",
  ],
} as const;

const errorSchema = {
  type: "object",
  properties: { status: { type: "integer" }, message: { type: "string" } },
  required: ["status", "message"],
} as const;

const statusSchema = {
  type: "object",
  properties: {
    epoch: integer,
    reporters: { ...integer, description: "Operators with a QoS report in the epoch (each counted once: its latest report)" },
    api: {
      type: ["object", "null"],
      description: "Null until a node probed the API; each figure the median over the reporters that did",
      properties: {
        probes: { ...integer, description: "Probes of every reporter, summed" },
        correctBps: bps,
        errorBps: bps,
        latencyP50Ms: integer,
        latencyP95Ms: integer,
      },
      required: ["probes", "correctBps", "errorBps", "latencyP50Ms", "latencyP95Ms"],
    },
    sources: {
      type: ["object", "null"],
      description: "Null until a report; the medians of the reporters' own sources",
      properties: { evmLatencyP50Ms: integer, svmLatencyP50Ms: integer, evmHeadLagSeconds: integer },
      required: ["evmLatencyP50Ms", "svmLatencyP50Ms", "evmHeadLagSeconds"],
    },
    peers: {
      type: "array",
      description:
        "Each license as the other operators' latest reports saw it sign in the hub's rounds (its own operator left out), ascending; empty before such a report",
      items: {
        type: "object",
        properties: {
          licenseId: integer,
          reporters: { ...integer, description: "Operators whose report observed the license" },
          roundsObserved: { ...integer, description: "The median of their rounds counted since the license first signed in the epoch" },
          signedBps: { ...bps, type: ["integer", "null"], description: "The median of their signed shares; null below 2 reporters" },
          medianSigningMs: {
            ...integer,
            type: ["integer", "null"],
            description: "The median of their median times from the hub's request to the signature; null below 2 reporters",
          },
        },
        required: ["licenseId", "reporters", "roundsObserved", "signedBps", "medianSigningMs"],
      },
    },
  },
  required: ["epoch", "reporters", "api", "sources", "peers"],
} as const;

/** The answers both routes share besides their 200. */
const NETWORK_ERRORS = {
  401: { description: "Missing or unknown API key", ...errorSchema },
  429: { description: "Rate limit or monthly quota", ...errorSchema },
  501: { description: "This API does not read the network (NETWORK_VERIFICATION_REGISTRY unset)", ...errorSchema },
  503: { description: "The L2 could not be read", ...errorSchema },
} as const;

/**
 * `GET /api/network/nodes` (any valid key): every license ever delegated, with its quality of service in the
 * current epoch as the chain records it (NetworkService); `GET /api/network/status`: the service as the
 * nodes' reports measured it. Both answer 501 when the API was started without the network
 * (`NETWORK_VERIFICATION_REGISTRY` unset), and 503 when the L2 cannot be read (the cause in the log only).
 */
export function registerNetworkRoutes(app: FastifyInstance, network: NetworkService | undefined): void {
  const route = (path: string, summary: string, answer: object, read: (network: NetworkService) => Promise<unknown>) =>
    app.get(
      path,
      {
        config: { requiresApiKey: true },
        schema: { summary, security: [{ apiKey: [] }], response: { 200: answer, ...NETWORK_ERRORS } },
      },
      async (request) => {
        if (network === undefined)
          throw new ApiError(501, "This API does not publish the network's figures: NETWORK_VERIFICATION_REGISTRY is not set");
        try {
          return await read(network);
        } catch (error) {
          request.log.warn({ failure: failureFields(error), path }, "network figures not read");
          throw new ApiError(503, "The network's figures could not be read from the L2; try again shortly");
        }
      },
    );
  route(
    "/api/network/nodes",
    "Every license's quality of service in the current epoch",
    {
      type: "object",
      properties: {
        epoch: integer,
        epochEndsAt: { ...integer, description: "Unix seconds" },
        block: { ...integer, description: "The L2 block the figures were read at" },
        nodes: { type: "array", items: nodeSchema },
      },
      required: ["epoch", "epochEndsAt", "block", "nodes"],
    },
    (network) => network.nodes(),
  );
  route(
    "/api/network/status",
    "The service as the circuit nodes measured it in the current epoch (medians of their reports)",
    statusSchema,
    (network) => network.status(),
  );
}

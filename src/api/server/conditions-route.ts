import type { ConditionAttestationJson } from "@avn/protocol/attestation-kinds";
import {
  ConditionInputError,
  conditionHash,
  linkMessage,
  ownersHash,
  parseConditionRequest,
  verifySolanaLink,
  type ConditionRequest,
} from "@avn/protocol/conditions";
import type { FastifyInstance } from "fastify";

import { chainsOf, headSources, readCondition, type ConditionPositions, type ConditionReading } from "../../chains/condition-reader.ts";

import { ApiError } from "../api-error.ts";
import { conditionEas, easExporterFor } from "./eas-export.ts";

import { attestCondition } from "../attestation-hub/attested-condition.ts";

import {
  CONDITION_ERROR_RESPONSES,
  CONDITION_SUCCESS_MESSAGE,
  conditionBodyDocumentation,
  conditionBodyValidationSchema,
  conditionQuerySchema,
  conditionSuccessSchema,
  documentedConditionSuccessSchema,
} from "./conditions-schemas.ts";

import { distinctLeafReads, takeLeafTokens } from "./condition-pricing.ts";

import { DEFAULT_ATTEST_COST, isAttestedRequest, type ApiServerDependencies } from "./dependencies.ts";

export const CONDITIONS_URL = "/api/conditions";

/** Both owners named, and no L2 chain id to check their link against. */
export const LINK_CHAIN_UNKNOWN =
  "Requests naming both an ethereum and a solana owner need the L2 chain id their link message names: " +
  "this server has none (configure L2_CHAIN_ID, or the attestation hub)";

/**
 * The route's own body limit, whatever `BODY_LIMIT_BYTES` says (that one is sized for one balance query):
 * the largest valid condition (16 ERC-1155 leaves with 78-digit ids and bounds, four combinators, both
 * owners and a link) is about 6 KB compact; this leaves room for a client that indents its JSON.
 */
export const CONDITIONS_BODY_LIMIT_BYTES = 16 * 1024;

/**
 * Registers `POST /api/conditions` (docs/api.md): a yes/no question over an owner's holdings on both chains,
 * priced, metered and answered like a single balance request. The body is checked by
 * `parseConditionRequest` (a 400 naming the offending path), the Solana owner's link against the L2 chain
 * id, then the leaves are read (every Ethereum leaf at one block, every Solana leaf at or after one slot)
 * and the verdict evaluated, or, with `?attest=true`, gathered with a quorum's signatures over it.
 */
export function registerConditionsRoute(
  app: FastifyInstance,
  deps: Pick<ApiServerDependencies, "evm" | "solana" | "attestation" | "linkChainId" | "rateLimit">,
): void {
  const linkChainId = deps.linkChainId ?? deps.attestation?.hub.domain.chainId;
  const attestCost = deps.rateLimit.attestCost ?? DEFAULT_ATTEST_COST;
  const sources = headSources(deps.evm, deps.solana);
  const schema = {
    summary: "Whether an owner's holdings on Ethereum and Solana meet a condition (all / any / atLeast / not over balance bounds)",
    security: [{ apiKey: [] }],
    querystring: conditionQuerySchema,
    body: conditionBodyValidationSchema,
    response: { 200: conditionSuccessSchema, ...CONDITION_ERROR_RESPONSES },
  };
  const documentedSchema = {
    ...schema,
    body: conditionBodyDocumentation,
    response: { ...schema.response, 200: documentedConditionSuccessSchema },
  };
  app.post<{ Body: unknown; Querystring: { attest?: string; eas?: string } }>(
    CONDITIONS_URL,
    {
      bodyLimit: CONDITIONS_BODY_LIMIT_BYTES,
      config: {
        requiresApiKey: true,
        attestable: true,
        // /openapi.json shows the body's shape, which parseConditionRequest checks (Fastify checks only that it is an object).
        swaggerTransform: ({ url }: { url: string }) => ({ schema: documentedSchema, url }),
      },
      schema,
    },
    async (request, reply) => {
      const asked = parseRequest(request.body);
      // Before the attestation's 501: the request is wrong whatever the server offers.
      await checkLink(asked, linkChainId);
      const signed = request.query.attest === "true";
      if (!signed) easExporterFor(request.query, deps.attestation);
      if (signed && deps.attestation === undefined) throw new ApiError(501, "Attested answers are not enabled on this server");
      const exporter = signed ? easExporterFor(request.query, deps.attestation) : undefined;
      // The arrival took one token, or ATTEST_COST for a signed verdict with the hub on (key-check.ts).
      const takenOnArrival = signed && isAttestedRequest(request) ? attestCost : 1;
      await takeLeafTokens(deps.rateLimit, request, reply, distinctLeafReads(asked.condition), takenOnArrival);
      if (signed && deps.attestation !== undefined) {
        const attested = await attestCondition(deps.attestation, asked);
        const answer = conditionAnswer(asked, attested.reading, attested.positions, attested.attestation);
        return exporter === undefined ? answer : { ...answer, data: { ...answer.data, eas: conditionEas(exporter, attested.attestation) } };
      }
      const chains = chainsOf(asked.condition);
      const [ethereumBlock, solanaSlot] = await Promise.all([
        chains.ethereum ? deps.evm.latestBlock() : 0n,
        chains.solana ? deps.solana.latestSlot() : 0n,
      ]);
      const positions = { ethereumBlock, solanaSlot };
      return conditionAnswer(asked, await readCondition(asked, sources, positions), positions);
    },
  );
}

/** The body in its normal form; a 400 with parseConditionRequest's message (it starts with the offending path). */
function parseRequest(body: unknown): ConditionRequest {
  try {
    return parseConditionRequest(body);
  } catch (error) {
    if (error instanceof ConditionInputError) throw new ApiError(400, error.message);
    throw error;
  }
}

/**
 * With both owners, `links.solana` must be the Solana owner's signature of the link message on this L2:
 * 501 when the server knows no L2 chain id, 400 quoting the text to sign when it does not verify.
 */
async function checkLink(request: ConditionRequest, linkChainId: bigint | undefined): Promise<void> {
  const { ethereum, solana } = request.owners;
  if (ethereum === undefined || solana === undefined) return;
  if (linkChainId === undefined) throw new ApiError(501, LINK_CHAIN_UNKNOWN);
  // parseConditionRequest requires links.solana whenever both owners are named.
  if (!(await verifySolanaLink({ ethereum, solana }, request.links?.solana ?? "", linkChainId))) {
    throw new ApiError(
      400,
      `links.solana is not the Solana owner's signature of the link message: owners.solana must sign (ed25519, UTF-8 bytes) exactly ` +
        JSON.stringify(linkMessage(ethereum, linkChainId)),
    );
  }
}

/**
 * The answer: the verdict, the hashes a contract pins, the positions read (only the condition's chains),
 * each leaf as read unless `reveal` is false, and the attestation when there is one.
 */
export function conditionAnswer(
  request: ConditionRequest,
  reading: ConditionReading,
  positions: ConditionPositions,
  attestation?: ConditionAttestationJson,
) {
  const chains = chainsOf(request.condition);
  const data = {
    verdict: reading.verdict,
    conditionHash: conditionHash(request.condition),
    ownersHash: ownersHash(request.owners),
    sourceBlocks: {
      ...(chains.ethereum ? { ethereum: positions.ethereumBlock } : {}),
      ...(chains.solana ? { solana: positions.solanaSlot } : {}),
    },
    ...(request.reveal
      ? {
          leaves: reading.leaves.map(({ leaf, balance, queryResult, holds }) => ({ ...leaf, balance, QueryResult: queryResult, holds })),
        }
      : {}),
    ...(attestation === undefined ? {} : { attestation }),
  };
  return { status: 200, message: CONDITION_SUCCESS_MESSAGE, data };
}

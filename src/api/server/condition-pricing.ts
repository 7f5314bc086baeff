import type { FastifyReply, FastifyRequest } from "fastify";

import { conditionLeaves, type ConditionNode } from "@avn/protocol/conditions";
import { ApiError } from "../api-error.ts";
import { rateLimitHeaders } from "../rate-limit/token-bucket.ts";
import type { ApiServerDependencies } from "./dependencies.ts";

/**
 * The reads a condition costs: its distinct leaves (by chain, asset, id and whether it counts delegations: two
 * leaves that differ only in their bounds share one read, as the readers coalesce them). Each is a read upstream,
 * by the API and, for a signed verdict, by every connected node; a Solana leaf is two RPC calls. A leaf counting
 * delegations is priced as two (`DELEGATION_LEAF_READS`): the registry's list, then every delegating wallet's balance.
 */
export function distinctLeafReads(condition: ConditionNode): number {
  const reads = new Map<string, number>();
  for (const leaf of conditionLeaves(condition)) {
    if (leaf.chain === "solana") reads.set(`solana:${leaf.token_mint_address}`, 1);
    else
      reads.set(
        `ethereum:${leaf.contract_address}:${leaf.token_id ?? ""}${leaf.delegations === true ? ":delegations" : ""}`,
        leaf.delegations === true ? DELEGATION_LEAF_READS : 1,
      );
  }
  return [...reads.values()].reduce((sum, count) => sum + count, 0);
}

/** What a leaf counting delegations costs, in reads. */
export const DELEGATION_LEAF_READS = 2;

/**
 * A condition is priced as a batch of its distinct leaves: one rate-limit token per read, the first
 * taken on arrival with every request's (`ATTEST_COST` of them for a signed verdict), the others here in
 * one all-or-nothing step once the body says how many there are. Short of them: a 429 with Retry-After
 * (when they will all be there), or without when the key's bucket can never hold them.
 */
export async function takeLeafTokens(
  rateLimit: ApiServerDependencies["rateLimit"],
  request: FastifyRequest,
  reply: FastifyReply,
  reads: number,
  takenOnArrival: number,
): Promise<void> {
  if (reads <= 1) return;
  const { capacity } = rateLimit.policy;
  const needed = takenOnArrival + reads - 1;
  if (needed > capacity)
    throw new ApiError(
      429,
      `A condition of ${reads} distinct leaves needs ${needed} rate-limit tokens and this key's bucket holds ${capacity}: ask for fewer leaves`,
    );
  const decision = await rateLimit.store.take(request.apiKey!.id, reads - 1, "all");
  const headers = rateLimitHeaders(decision, rateLimit.policy);
  if (!decision.allowed)
    throw new ApiError(429, `Rate limit exceeded: a condition of ${reads} distinct leaves needs ${needed} tokens at once`, headers);
  reply.headers(headers);
}

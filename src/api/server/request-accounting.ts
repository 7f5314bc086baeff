import type { FastifyInstance, FastifyRequest } from "fastify";

import { isAttestedRequest, isProofRequest, type ApiServerDependencies } from "./dependencies.ts";
import { failureFields } from "../failure-log.ts";

/** Appended to a route's template in usage for its attested answers: `/api/ccq-evm?attest=true`. */
export const ATTESTED_ENDPOINT_SUFFIX = "?attest=true";
/** Appended for its proven answers (`?proof=true`), which are priced apart too. */
export const PROVEN_ENDPOINT_SUFFIX = "?proof=true";

/** Tells the accounting a batch's item statuses, once the batch is answered with its entries. */
export type BatchItemStatuses = (request: FastifyRequest, statuses: number[]) => void;

/**
 * Counts every answered request: its metrics (route template, status, duration), and its key's usage,
 * once per request (an attested answer under its own endpoint), or once per item for a batch answered with its entries (usage counts its items, not
 * it). Returns how a batch route tells its item statuses.
 */
export function registerRequestAccounting(app: FastifyInstance, deps: Pick<ApiServerDependencies, "metrics" | "usage">): BatchItemStatuses {
  const { metrics, usage } = deps;
  const batchItemStatuses = new WeakMap<FastifyRequest, number[]>();
  // A callback hook, not an async one: each async hook costs the request path a promise and a turn of
  // the microtask queue.
  app.addHook("onResponse", (request, reply, done) => {
    const route = request.routeOptions.url ?? "unmatched";
    metrics.recordRequest(route, reply.statusCode, reply.elapsedTime / 1000);
    const keyId = request.apiKey?.id;
    if (usage !== undefined && keyId !== undefined) {
      try {
        const items = reply.statusCode === 200 ? batchItemStatuses.get(request) : undefined;
        // Attested answers are priced apart (ATTEST_COST), so they are metered as their own endpoint.
        if (items === undefined) usage.record(keyId, `${route}${endpointSuffix(request)}`, reply.statusCode);
        else for (const status of items) usage.record(keyId, route, status);
      } catch (error) {
        // The answer is sent; a failing meter must not turn into an unhandled error here.
        request.log.error({ failure: failureFields(error) }, "usage not recorded");
      }
    }
    done();
  });
  return (request, statuses) => batchItemStatuses.set(request, statuses);
}

/** The usage endpoint's suffix: attested and proven answers are metered apart from plain ones. */
function endpointSuffix(request: FastifyRequest): string {
  if (isAttestedRequest(request)) return ATTESTED_ENDPOINT_SUFFIX;
  if (isProofRequest(request)) return PROVEN_ENDPOINT_SUFFIX;
  return "";
}

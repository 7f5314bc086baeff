import type { FastifyInstance } from "fastify";

import { ApiError, toApiError } from "../api-error.ts";
import { HubBusUnavailableError } from "../attestation-hub/bus/redis-bus.ts";
import { failureFields } from "../failure-log.ts";
import { KeyDatabaseUnavailableError } from "../keys/key-verifier.ts";
import { RateLimitStoreError } from "../rate-limit/token-bucket.ts";
import { MonthTotalUnavailableError } from "../usage/usage-meter.ts";
import { sendError } from "./responses.ts";

/**
 * Every error a route or hook throws becomes its `{ status, message }` answer (toApiError decides the
 * status, after the dependencies below); the server's own failures are logged, without secrets, and never
 * shown to the client.
 */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error, request, reply) => {
    const apiError = unavailableDependency(error) ?? toApiError(error);
    // A 503 is a dependency's passing state (a quorum not gathered, the L2 not answering), said to the client.
    if (apiError.status === 503) request.log.warn({ reason: apiError.message }, "answered 503");
    else if (apiError.status >= 500) request.log.error({ failure: failureFields(error) }, "request failed");
    return sendError(reply, apiError);
  });
  app.setNotFoundHandler((_request, reply) => sendError(reply, new ApiError(404, "Not found")));
}

/**
 * A dependency of the API's own that does not answer (Redis, the key database), said as what it is: a 503
 * to retry shortly, never the 500 that blames the balance. A key that cannot be checked, or whose month's
 * usage cannot be read on its first request here, is refused, not let through. The API's Redis rate-limit store falls back to per-process
 * buckets, so its error reaches here only from a store used without that fallback; the hub bus's reaches
 * here from `GET /attest/nodes`, which lists every instance's nodes and cannot while Redis is away.
 */
function unavailableDependency(error: unknown): ApiError | undefined {
  if (error instanceof RateLimitStoreError)
    return new ApiError(503, "Service unavailable: the rate-limit store (Redis) did not answer; retry shortly", { "retry-after": "1" });
  if (error instanceof KeyDatabaseUnavailableError || error instanceof MonthTotalUnavailableError)
    return new ApiError(503, "Service unavailable: the key database did not answer; retry shortly", { "retry-after": "1" });
  if (error instanceof HubBusUnavailableError)
    return new ApiError(503, `Service unavailable: ${error.message}; retry shortly`, { "retry-after": "1" });
  return undefined;
}

import type { FastifyInstance } from "fastify";

import { ApiError, toApiError } from "../api-error.ts";
import { failureFields } from "../failure-log.ts";
import { sendError } from "./responses.ts";

/**
 * Every error a route or hook throws becomes its `{ status, message }` answer (toApiError decides the
 * status); the server's own failures are logged, without secrets, and never shown to the client.
 */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error, request, reply) => {
    const apiError = toApiError(error);
    // A 503 is a dependency's passing state (a quorum not gathered, the L2 not answering), said to the client.
    if (apiError.status === 503) request.log.warn({ reason: apiError.message }, "answered 503");
    else if (apiError.status >= 500) request.log.error({ failure: failureFields(error) }, "request failed");
    return sendError(reply, apiError);
  });
  app.setNotFoundHandler((_request, reply) => sendError(reply, new ApiError(404, "Not found")));
}

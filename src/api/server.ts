import swagger from "@fastify/swagger";
import Fastify, { type FastifyInstance } from "fastify";

import { toApiError } from "./api-error.ts";
import { evmBalanceProver } from "./server/balance-proof-route.ts";
import { registerBalanceRoute } from "./server/balance-route.ts";
import { registerBatchRoute } from "./server/batch-route.ts";
import { evmChain, svmChain } from "./server/chains.ts";
import { registerConditionsRoute } from "./server/conditions-route.ts";
import { closeConnectionsOnShutdown } from "./server/connection-close.ts";
import type { ApiServerDependencies } from "./server/dependencies.ts";
import { registerErrorHandling } from "./server/error-handling.ts";
import { registerKeyCheck } from "./server/key-check.ts";
import { registerNetworkRoutes } from "./server/network-routes.ts";
import { registerOperationsRoutes } from "./server/operations-routes.ts";
import { registerRequestAccounting } from "./server/request-accounting.ts";
import { sendError } from "./server/responses.ts";
import { registerSubscriptionRoutes } from "./webhooks/subscription-routes.ts";

export type { ApiServerDependencies, KeyCheck, UsageRecorder } from "./server/dependencies.ts";

/**
 * The verification API: `POST /api/ccq-evm` (with `?proof=true`, a storage proof of the balance,
 * balance-proof-route.ts) and `POST /api/ccq-svm`, their batch forms
 * `POST /api/ccq-evm/batch` and `POST /api/ccq-svm/batch` (up to 100 items at one position, see batch.ts),
 * and `POST /api/conditions` (a verdict over holdings on both chains, conditions-route.ts), behind API keys
 * and per-key token-bucket rate limits, plus `/healthz`, `/readyz`, `/metrics` and `/openapi.json`. Authentication runs on request arrival, before the body is read, so a missing or
 * unknown key is a 401 whatever else is wrong.
 */
export async function buildApiServer(deps: ApiServerDependencies): Promise<FastifyInstance> {
  const app = Fastify({
    ...(deps.loggerInstance === undefined ? { logger: deps.logger ?? false } : { loggerInstance: deps.loggerInstance }),
    bodyLimit: deps.bodyLimitBytes ?? 4_096,
    // Strict body validation: a number where a string belongs is an error, not coerced.
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false } },
    frameworkErrors: (error, _request, reply) => {
      void sendError(reply, toApiError(error));
    },
  });
  // Only JSON bodies: without this, text/plain would be parsed and reach validation.
  app.removeContentTypeParser("text/plain");
  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: { title: "Asset verification API", version: "1.0.0", description: "What a wallet holds on Ethereum and Solana." },
      components: { securitySchemes: { apiKey: { type: "apiKey", in: "header", name: "Authorization" } } },
    },
  });

  registerKeyCheck(app, deps);
  const recordItemStatuses = registerRequestAccounting(app, deps);
  closeConnectionsOnShutdown(app);
  registerErrorHandling(app);

  const cacheTtlMs = deps.cacheTtlMs ?? 2_000;
  const evm = evmChain(deps.evm, cacheTtlMs, deps.metrics, deps.evmReorgs);
  const svm = svmChain(deps.solana, cacheTtlMs, deps.metrics);
  registerBalanceRoute(app, evm, deps.attestation, evmBalanceProver(deps.proofs, deps.evm));
  registerBalanceRoute(app, svm, deps.attestation);
  registerBatchRoute(app, evm, { ...deps, recordItemStatuses });
  registerBatchRoute(app, svm, { ...deps, recordItemStatuses });
  registerConditionsRoute(app, deps);
  deps.attestation?.hub.register(app);
  registerNetworkRoutes(app, deps.network);
  if (deps.webhooks !== undefined) registerSubscriptionRoutes(app, deps.webhooks);
  registerOperationsRoutes(app, deps);
  return app;
}

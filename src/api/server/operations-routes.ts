import type { FastifyInstance } from "fastify";

import type { ApiServerDependencies } from "./dependencies.ts";

/**
 * The operator's routes, without a key and hidden from /openapi.json: liveness, readiness (every
 * upstream answers), Prometheus metrics, and the OpenAPI document itself.
 */
export function registerOperationsRoutes(app: FastifyInstance, deps: Pick<ApiServerDependencies, "checkUpstreams" | "metrics">): void {
  app.get("/healthz", { schema: { hide: true } }, async () => ({ status: "ok" }));
  app.get("/readyz", { schema: { hide: true } }, async (_request, reply) => {
    const upstreams = await deps.checkUpstreams();
    const ready = Object.values(upstreams).every(Boolean);
    return reply.code(ready ? 200 : 503).send({ status: ready ? "ready" : "not ready", upstreams });
  });
  app.get("/metrics", { schema: { hide: true } }, async (_request, reply) =>
    reply.type(deps.metrics.registry.contentType).send(await deps.metrics.exposition()),
  );
  app.get("/openapi.json", { schema: { hide: true } }, async () => app.swagger());
}

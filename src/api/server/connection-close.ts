import type { FastifyInstance } from "fastify";

/**
 * Graceful shutdown: requests in flight finish; their connections then close instead of idling in
 * keep-alive until the timeout (Node closes only the connections that are idle when close starts).
 */
export function closeConnectionsOnShutdown(app: FastifyInstance): void {
  let closing = false;
  app.addHook("preClose", async () => {
    closing = true;
  });
  app.addHook("onSend", (_request, reply, payload, done) => {
    if (closing) reply.header("connection", "close");
    done(null, payload);
  });
}

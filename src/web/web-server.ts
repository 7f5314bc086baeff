import { readFile } from "node:fs/promises";
import path from "node:path";

import fastifyStatic from "@fastify/static";
import Fastify, { type FastifyInstance, type FastifyReply } from "fastify";

import type { NetworkConfig } from "@avn/protocol/network-config";
import { inlineScriptHashes, pageHtml } from "./page-html.ts";

export interface WebServerOptions {
  /** The web app's production build (`apps/web/dist`). */
  distDir: string;
  /** What `/config.json` answers: the deployment the app acts on. */
  config: NetworkConfig;
  /** 0 picks a free port. */
  port: number;
  host?: string;
}

export interface RunningWebServer {
  app: FastifyInstance;
  url: string;
  close(): Promise<void>;
}

/**
 * The origins of the deployment's RPC endpoints and of its credits service (the Credits page reads and
 * posts there): the only places besides itself the page may connect to.
 */
function connectOrigins(config: NetworkConfig): string[] {
  const urls = [config.l1.rpcUrl, config.l2.rpcUrl, config.l2.wsUrl, config.credits?.url].filter((url): url is string => url !== undefined);
  return [...new Set(urls.map((url) => new URL(url).origin))];
}

/**
 * Serves the built web app: hashed assets cached for good (compressed, when the build wrote `.br` and `.gz`
 * beside them and the browser takes them), `index.html` for every page route (the app routes in the browser)
 * with the deployment's settings inline, and `/config.json` with those
 * settings. A content security policy lets the page talk only to this server and the deployment's RPC
 * endpoints, and run no inline script but those of the build's `index.html` (named by hash).
 */
export async function startWebServer(options: WebServerOptions): Promise<RunningWebServer> {
  const app = Fastify({ logger: false });
  const indexHtml = await readFile(path.join(options.distDir, "index.html"), "utf8");
  // Every page route gets the same document: the app routes in the browser, and the shell it paints first loads
  // the page's own code once painted (apps/web/src/App.tsx), so the document names no page's chunks.
  const html = pageHtml(indexHtml, options.config);
  const csp = [
    "default-src 'self'",
    `connect-src 'self' ${connectOrigins(options.config).join(" ")}`,
    // Wallets announce their icons as data: URIs (EIP-6963).
    "img-src 'self' data:",
    "style-src 'self'",
    ["script-src 'self'", ...inlineScriptHashes(indexHtml)].join(" "),
    "object-src 'none'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
  app.addHook("onSend", async (_request, reply) => {
    reply.header("content-security-policy", csp);
    reply.header("x-content-type-options", "nosniff");
    reply.header("referrer-policy", "no-referrer");
  });
  await app.register(fastifyStatic, {
    root: options.distDir,
    index: false,
    wildcard: true,
    cacheControl: false,
    preCompressed: true,
    // Vite names assets by content hash: they never change under one name.
    setHeaders: (reply, file) => {
      const immutable = file.includes(`${path.sep}assets${path.sep}`);
      reply.header("cache-control", immutable ? "public, max-age=31536000, immutable" : "no-cache");
    },
  });
  app.get("/config.json", async (_request, reply) => reply.header("cache-control", "no-store").send(options.config));
  const sendIndex = (reply: FastifyReply) => reply.type("text/html; charset=utf-8").header("cache-control", "no-cache").send(html);
  app.get("/", async (_request, reply) => sendIndex(reply));
  app.get("/index.html", async (_request, reply) => sendIndex(reply));
  // A page route (no file extension) loads the app; a missing asset is a real 404.
  app.setNotFoundHandler(async (request, reply) => {
    if (request.method === "GET" && !path.extname(request.url.split("?")[0])) return sendIndex(reply);
    return reply.code(404).type("text/plain").send("Not found");
  });
  const address = await app.listen({ port: options.port, host: options.host ?? "127.0.0.1" });
  return { app, url: address.replace("[::1]", "localhost"), close: () => app.close() };
}

import { readFile } from "node:fs/promises";
import path from "node:path";

import fastifyStatic from "@fastify/static";
import Fastify, { type FastifyInstance, type FastifyReply } from "fastify";

import type { NetworkConfig } from "@avn/protocol/network-config";
import { inlineScriptHashes, pageChunks, pageHtml, pageModuleOf, type BuildManifest } from "./page-html.ts";

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
 * with the deployment's settings inline and the page's chunks preloaded, and `/config.json` with those
 * settings. A content security policy lets the page talk only to this server and the deployment's RPC
 * endpoints, and run no inline script but those of the build's `index.html` (named by hash).
 */
export async function startWebServer(options: WebServerOptions): Promise<RunningWebServer> {
  const app = Fastify({ logger: false });
  const indexHtml = await readFile(path.join(options.distDir, "index.html"), "utf8");
  const manifest = await readFile(path.join(options.distDir, ".vite", "manifest.json"), "utf8").then(
    (text) => JSON.parse(text) as BuildManifest,
    () => ({}), // a build without a manifest: no page is preloaded
  );
  const pages = new Map<string, string>();
  const htmlOf = (pathname: string): string => {
    const key = pageModuleOf(manifest, pathname) ?? "";
    let html = pages.get(key);
    if (html === undefined) {
      html = pageHtml(indexHtml, options.config, key === "" ? [] : pageChunks(manifest, key));
      pages.set(key, html);
    }
    return html;
  };
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
  const sendIndex = (reply: FastifyReply, url: string) =>
    reply
      .type("text/html; charset=utf-8")
      .header("cache-control", "no-cache")
      .send(htmlOf(url.split("?")[0]));
  app.get("/", async (request, reply) => sendIndex(reply, request.url));
  app.get("/index.html", async (_request, reply) => sendIndex(reply, "/"));
  // A page route (no file extension) loads the app; a missing asset is a real 404.
  app.setNotFoundHandler(async (request, reply) => {
    if (request.method === "GET" && !path.extname(request.url.split("?")[0])) return sendIndex(reply, request.url);
    return reply.code(404).type("text/plain").send("Not found");
  });
  const address = await app.listen({ port: options.port, host: options.host ?? "127.0.0.1" });
  return { app, url: address.replace("[::1]", "localhost"), close: () => app.close() };
}

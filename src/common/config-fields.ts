import { z } from "zod";

import { loggedAsOrigin } from "./config-redaction.ts";
import { urlList } from "./environment.ts";

const HTTP = /^https?$/;

/** A URL with a protocol `protocols` accepts (a Redis server, a WebSocket endpoint…), logged by origin only. */
export function serviceUrl(protocols: RegExp) {
  return loggedAsOrigin(z.url({ protocol: protocols }));
}

/** A JSON-RPC URL (http or https unless told), logged by origin only: hosted RPC URLs carry API keys. */
export function rpcUrl(protocols: RegExp = HTTP) {
  return serviceUrl(protocols);
}

/** A WebSocket JSON-RPC URL (ws or wss; subscriptions), logged by origin only: hosted ones carry API keys too. */
export function wsRpcUrl() {
  return rpcUrl(/^wss?$/);
}

/** A comma-separated list of JSON-RPC URLs, at least one, tried in order with failover; logged by origin only. */
export function rpcUrlList(protocols: RegExp = HTTP) {
  return loggedAsOrigin(urlList(protocols));
}

/** pino's level names; `silent` logs nothing. */
export function logLevel() {
  return z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info");
}

/** `true` or `false`, nothing else (a typo such as `ture` is an error, not a silent false); `fallback` when unset. */
export function booleanFlag(fallback: boolean) {
  return z
    .enum(["true", "false"])
    .default(fallback ? "true" : "false")
    .transform((value) => value === "true");
}

/** A TCP port to listen on (0: any free one). */
export function port() {
  return z.coerce.number().int().min(0).max(65_535);
}

/** The interface to listen on: loopback unless told, so a service is not exposed by accident. */
export function listenHost() {
  return z.string().default("127.0.0.1");
}

/** How long one upstream attempt may take; a call makes at most max(3, number of URLs) attempts. */
export function upstreamTimeoutMs() {
  return z.coerce.number().int().positive().default(3_000);
}

/**
 * The settings every service that reads the source chains shares (the API and the circuit node, which
 * must agree on what a balance is): where to read Ethereum and Solana, how long one upstream attempt may
 * take, and the log level. Spread into a service's `z.object({...})`.
 */
export const sourceChainFields = {
  /** Ethereum JSON-RPC URLs, tried in order with failover. */
  EVM_RPC_URLS: rpcUrlList(),
  /** Solana JSON-RPC URLs, tried in order with failover. */
  SOLANA_RPC_URLS: rpcUrlList(),
  UPSTREAM_TIMEOUT_MS: upstreamTimeoutMs(),
  LOG_LEVEL: logLevel(),
};

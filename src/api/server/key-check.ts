import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";

import { ApiError } from "../api-error.ts";
import { QUOTA_EXCEEDED_MESSAGE, RATE_LIMITED_ENTRY } from "../batch.ts";
import type { VerifiedKey } from "../keys/api-keys.ts";
import { rateLimitHeaders } from "../rate-limit/token-bucket.ts";
import { DEFAULT_ATTEST_COST, isAttestedRequest, isProofRequest, type ApiServerDependencies } from "./dependencies.ts";

/**
 * The gate of every route marked `requiresApiKey`, on request arrival (before the body is read, so a
 * missing or unknown key is a 401 whatever else is wrong): the key, then its monthly quota, then one
 * token of its rate limit (`attestCost` for an attested answer or a storage proof), then the body's charset.
 */
export function registerKeyCheck(
  app: FastifyInstance,
  deps: Pick<ApiServerDependencies, "keys" | "rateLimit" | "usage" | "attestation" | "proofs">,
): void {
  const { usage, rateLimit } = deps;
  const attestCost = rateLimit.attestCost ?? DEFAULT_ATTEST_COST;
  // Kept for usage, quotas and the batch routes' further tokens. A primitive default, so Fastify sets it
  // up in the request's constructor rather than adding a property per request.
  app.decorateRequest("apiKey", undefined);
  /**
   * A verified key's request goes on when its key has quota left this month, then when its bucket has a
   * token. One token per request, before the body is read, also on the batch routes: a key with no token
   * left gets its 429 without the server parsing its body, and a batch refused as a whole (not an
   * array…) costs one token like any refused request. A batch takes its further items' tokens once it
   * knows how many there are (see admitBatchItems).
   */
  const admit = (request: FastifyRequest, reply: FastifyReply, key: VerifiedKey, done: (error?: Error) => void) => {
    request.apiKey = key;
    // The first request of a key with a quota in this process waits until the key's month total is read
    // (a request of a key already known goes on in this turn); a total that cannot be read refuses it.
    const reading = usage?.whenQuotaKnown?.(key);
    if (reading !== undefined) return void reading.then(() => admitWithinQuota(request, reply, key, done), done);
    admitWithinQuota(request, reply, key, done);
  };
  const admitWithinQuota = (request: FastifyRequest, reply: FastifyReply, key: VerifiedKey, done: (error?: Error) => void) => {
    if (usage !== undefined && usage.remainingQuota(key) <= 0) return done(quotaExceeded());
    // An attested answer (with the hub on) or a storage proof (with proofs configured) takes `attestCost`
    // tokens at once or none: a key that has fewer left gets its 429 for that request only, and its plain
    // requests go on. A request that will be a 501 costs one token.
    const priced = (deps.attestation !== undefined && isAttestedRequest(request)) || (deps.proofs !== undefined && isProofRequest(request));
    const tokens = priced ? attestCost : 1;
    rateLimit.store.take(key.id, tokens, "all").then((decision) => {
      const headers = rateLimitHeaders(decision, rateLimit.policy);
      if (!decision.allowed) return done(new ApiError(429, RATE_LIMITED_ENTRY.message, headers));
      reply.headers(headers);
      if (hasForeignCharset(request.headers["content-type"]))
        return done(new ApiError(400, "Content-Type must be application/json in UTF-8"));
      done();
    }, done);
  };
  // A callback hook, not an async one: each async hook costs the request path a promise and a turn of
  // the microtask queue.
  app.addHook("onRequest", (request, reply, done) => {
    // Decided on the matched route, not the raw URL: the router also matches encoded spellings of a
    // path (`/%61pi/…`) and absolute-form request targets, which must not get past the key check.
    if (request.routeOptions.config.requiresApiKey !== true) return done();
    const key = presentedKey(request);
    if (key === undefined) return done(new ApiError(401, "Missing API key"));
    // A remembered live key goes on in this turn; any other key is asked of the key store.
    const remembered = deps.keys.cached(key);
    if (remembered !== undefined) return admit(request, reply, remembered, done);
    deps.keys.verify(key).then((verified) => {
      if (verified === undefined) return done(new ApiError(401, "Unknown API key"));
      admit(request, reply, verified, done);
    }, done);
  });
}

/**
 * `Authorization: <key>` or `Authorization: Bearer <key>`; undefined when the header is absent or blank.
 * Any other shape is returned whole, so it is an unknown key (401 "Unknown API key"), not a missing one.
 */
function presentedKey(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (typeof header !== "string" || header.trim() === "") return undefined;
  const match = /^\s*(?:Bearer\s+)?(\S+)\s*$/i.exec(header);
  return match?.[1] ?? header;
}

/** A JSON body in a charset other than UTF-8 would be decoded wrongly: refuse it (RFC 8259 JSON is UTF-8). */
function hasForeignCharset(contentType: string | undefined): boolean {
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType ?? "")?.[1];
  return charset !== undefined && !/^utf-?8$/i.test(charset);
}

/** Over its monthly quota, a key can try again when the next calendar month (UTC) begins. */
function quotaExceeded(): ApiError {
  return new ApiError(429, QUOTA_EXCEEDED_MESSAGE, { "retry-after": String(secondsToNextMonth()) });
}

/** Seconds until the next calendar month (UTC) begins, when monthly quotas start again (a Retry-After). */
export function secondsToNextMonth(now = Date.now()): number {
  const today = new Date(now);
  const nextMonth = Date.UTC(today.getUTCFullYear(), today.getUTCMonth() + 1, 1);
  return Math.ceil((nextMonth - now) / 1000);
}

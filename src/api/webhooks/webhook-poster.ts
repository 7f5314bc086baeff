/**
 * One delivery attempt: a single POST of a signed body to a subscriber's URL. The subscriber's server is not
 * trusted to behave, so everything about the attempt is bounded by us: where it connects (url-guard.ts, at
 * connect time), how long it takes (one timer over the whole exchange), how much of the answer is read
 * (a small cap, the rest never buffered), and no redirect is followed (a 3xx could point anywhere,
 * including inside our network). It never throws: every failure is an outcome for the delivery log.
 *
 * node:http rather than fetch: only its `lookup` option lets the guard choose the address connected to.
 */
import http from "node:http";
import https from "node:https";
import { isIP, type LookupFunction } from "node:net";

import { resolveWebhookHost, webhookHostname, type WebhookHostLookup } from "./url-guard.ts";

export interface WebhookPostRequest {
  url: URL;
  body: string;
  /** Added to the request (the signature, the event's id); they may override the defaults but not Content-Length. */
  headers: Record<string, string>;
  allowPrivate: boolean;
  /** The bound on the whole attempt: connect, send, response headers and body. */
  timeoutMs?: number;
  /** How much of the response body is kept for the delivery log; the rest is not read. */
  maxResponseBytes?: number;
  lookup?: WebhookHostLookup;
}

export interface WebhookPostOutcome {
  /** A 2xx answer. */
  ok: boolean;
  status?: number;
  latencyMs: number;
  /** Why the attempt failed; names at most the host, never the URL (its path or query may hold a token). */
  error?: string;
  /** At most `maxResponseBytes` of the answer, decoded as UTF-8. */
  responseBody?: string;
}

export const DEFAULT_WEBHOOK_TIMEOUT_MS = 5_000;
export const DEFAULT_WEBHOOK_MAX_RESPONSE_BYTES = 1_024;
export const WEBHOOK_USER_AGENT = "avn-webhooks/1";

/**
 * The connection's own DNS lookup: resolves the name and checks every address before Node connects to one,
 * so a name that turns private after the subscription check (DNS rebinding) is refused here. Node asks for
 * `all` addresses when it races IPv4 and IPv6 (autoSelectFamily); each of them was checked.
 */
function guardedLookup(request: WebhookPostRequest): LookupFunction {
  return (hostname, options, callback) => {
    const family = options.family === "IPv4" ? 4 : options.family === "IPv6" ? 6 : options.family;
    resolveWebhookHost(hostname, { allowPrivate: request.allowPrivate, lookup: request.lookup }).then(
      (addresses) => {
        const found = addresses.map((address) => ({ address, family: isIP(address) }));
        const wanted = family === 4 || family === 6 ? found.filter((entry) => entry.family === family) : found;
        if (wanted.length === 0) callback(Object.assign(new Error(`no IPv${family} address`), { code: "ENOTFOUND" }), "");
        else if (options.all === true) callback(null, wanted);
        else callback(null, wanted[0].address, wanted[0].family);
      },
      (error: Error) => callback(error, ""),
    );
  };
}

/** An error's text without the URL: Node's own messages name hosts and addresses, but a wrapped one might not. */
function describeError(error: unknown, url: URL): string {
  const { code, message } = error as { code?: unknown; message?: unknown };
  let text = typeof message === "string" && message !== "" ? message : String(error);
  if (url.pathname.length > 1 || url.search !== "") text = text.replaceAll(url.href, url.host).replaceAll(url.pathname + url.search, "");
  if (typeof code === "string" && !text.includes(code)) text = `${code}: ${text}`;
  return `request to ${url.host} failed: ${text}`;
}

/** POSTs `request.body` once and reports what happened; never throws. */
export async function postWebhook(request: WebhookPostRequest): Promise<WebhookPostOutcome> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const { url } = request;
  const timeoutMs = request.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS;
  const maxResponseBytes = request.maxResponseBytes ?? DEFAULT_WEBHOOK_MAX_RESPONSE_BYTES;
  try {
    // Node connects to an IP literal without calling `lookup`: the guard must see it here.
    const host = webhookHostname(url);
    if (isIP(host) !== 0) await resolveWebhookHost(host, { allowPrivate: request.allowPrivate });
  } catch (error) {
    return { ok: false, latencyMs: elapsed(), error: describeError(error, url) };
  }
  const transport = url.protocol === "https:" ? https : url.protocol === "http:" ? http : undefined;
  if (transport === undefined) return { ok: false, latencyMs: elapsed(), error: `unsupported protocol ${url.protocol}` };
  const body = Buffer.from(request.body, "utf8");

  return new Promise<WebhookPostOutcome>((resolve) => {
    let settled = false;
    let status: number | undefined;
    let outgoing: http.ClientRequest | undefined;
    const finish = (outcome: Omit<WebhookPostOutcome, "latencyMs" | "status">) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      // Whatever is still open (a body never finished, a socket never answered) goes now, not at the peer's pace.
      outgoing?.destroy();
      resolve({ ...(status === undefined ? {} : { status }), ...outcome, latencyMs: elapsed() });
    };
    const timer = setTimeout(() => finish({ ok: false, error: `timed out after ${timeoutMs} ms` }), timeoutMs);
    try {
      outgoing = transport.request(url, {
        method: "POST",
        agent: false, // one connection per attempt: nothing pooled outlives it, no socket checked for another host
        lookup: guardedLookup(request),
        headers: {
          "Content-Type": "application/json",
          "User-Agent": WEBHOOK_USER_AGENT,
          ...request.headers,
          "Content-Length": String(body.length),
        },
      });
    } catch (error) {
      // Thrown synchronously for a header value Node refuses (a newline in it, for one).
      finish({ ok: false, error: describeError(error, url) });
      return;
    }
    outgoing.on("error", (error) => finish({ ok: false, error: describeError(error, url) }));
    outgoing.on("response", (response) => {
      status = response.statusCode ?? 0;
      const ok = status >= 200 && status < 300;
      if (status >= 300 && status < 400) {
        finish({ ok: false, error: `redirect not followed (${status})` });
        return;
      }
      const chunks: Buffer[] = [];
      let kept = 0;
      const done = () => finish({ ok, responseBody: Buffer.concat(chunks).toString("utf8") });
      response.on("data", (chunk: Buffer) => {
        const room = maxResponseBytes - kept;
        if (chunk.length < room) {
          chunks.push(chunk);
          kept += chunk.length;
          return;
        }
        chunks.push(chunk.subarray(0, room));
        kept += room;
        // The cap is reached: what follows is not read at all (finish destroys the socket).
        done();
      });
      response.on("end", done);
      response.on("error", (error) => finish({ ok: false, error: describeError(error, url) }));
      // A response cut short without an error event still ends the attempt now, not at the timeout.
      response.on("close", done);
      if (maxResponseBytes <= 0) done();
    });
    outgoing.end(body);
  });
}

import { AvnApiError } from "./errors.ts";
import { parseJsonExact } from "./json.ts";

/**
 * One request to the API with retries: the only code that talks HTTP. It retries what waiting can fix and
 * nothing else (docs/api.md, "Request handling"):
 *
 * - 429 with `Retry-After`, after that many seconds. A 429 *without* it is final: the API leaves the header
 *   out when waiting cannot help (a batch larger than the key's bucket will ever hold). A `Retry-After`
 *   longer than `maxRetryAfter` (the monthly quota's points to the next month) is final too, and surfaces
 *   as the error's `retryAfter`.
 * - 5xx (an upstream down, an attestation quorum not reached in time: 503 with `Retry-After: 1`), after its
 *   `Retry-After` or a short exponential backoff. Not 501: the API answers it for a feature the server does
 *   not offer (`?attest=true` without the hub), which no retry changes.
 * - No answer at all (a network error, the per-attempt timeout), after the backoff.
 *
 * Every other status (400, 401, 404, 422 …) is the request's own fault and is thrown at once. Reads are
 * retried so (asking again changes nothing but the key's rate-limit tokens); a request that changes something
 * only after a 429 (`ApiRequest.idempotent`).
 */

export interface HttpOptions {
  baseUrl: string;
  apiKey: string;
  /** Retries after the first attempt. */
  retries: number;
  fetch: typeof globalThis.fetch;
  /** Per attempt, body included. */
  timeoutMs: number;
  /** The longest `Retry-After` (seconds) worth waiting for; longer ones are thrown. */
  maxRetryAfter: number;
}

/** The parsed JSON of a 2xx answer, integers exact. */
export function postJson(
  options: HttpOptions,
  path: string,
  query: Readonly<Record<string, string>>,
  body: unknown,
  signal?: AbortSignal,
): Promise<unknown> {
  return requestJson(options, { method: "POST", path, query, body, signal });
}

/** One call to the API: its method, path, query, JSON body, and whether asking again is harmless. */
export interface ApiRequest {
  method: "GET" | "POST" | "DELETE";
  path: string;
  query?: Readonly<Record<string, string>>;
  body?: unknown;
  signal?: AbortSignal;
  /**
   * A request that changes something (creating a subscription, deleting one) is not repeated after an answer
   * that may have come after the change (a 5xx, no answer at all): only a 429, which the API sends before doing
   * anything. Reads are retried as the module says. Default true.
   */
  idempotent?: boolean;
}

/** The parsed JSON of a 2xx answer (undefined for 204), integers exact. */
export async function requestJson(options: HttpOptions, request: ApiRequest): Promise<unknown> {
  const search = new URLSearchParams(request.query ?? {}).toString();
  const url = `${options.baseUrl.replace(/\/+$/, "")}${request.path}${search === "" ? "" : `?${search}`}`;
  const headers: Record<string, string> = { Authorization: options.apiKey, Accept: "application/json" };
  const init: RequestInit = { method: request.method, headers };
  if (request.body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(request.body, (_key, value: unknown) => (typeof value === "bigint" ? value.toString() : value));
  }
  for (let attempt = 0; ; ++attempt) {
    const outcome = await attemptOnce(options, url, init, request.signal);
    if ("value" in outcome) return outcome.value;
    const retryable = request.idempotent !== false || outcome.error.status === 429;
    const delayMs = retryable ? retryDelayMs(outcome.error, options.maxRetryAfter, attempt) : undefined;
    if (delayMs === undefined || attempt >= options.retries) throw outcome.error;
    await sleep(delayMs, request.signal);
  }
}

/** One request: its parsed JSON, or the error it ends with (thrown only for the caller's own abort). */
async function attemptOnce(
  options: HttpOptions,
  url: string,
  init: RequestInit,
  signal: AbortSignal | undefined,
): Promise<{ value: unknown } | { error: AvnApiError }> {
  const attempt = withTimeout(options.timeoutMs, signal);
  try {
    let response: Response;
    let text: string;
    try {
      response = await options.fetch(url, { ...init, signal: attempt.signal });
      text = await response.text();
    } catch (cause) {
      if (signal?.aborted === true) throw signal.reason;
      const why = attempt.timedOut() ? `no answer within ${options.timeoutMs} ms` : describe(cause);
      return { error: new AvnApiError(0, `Could not reach the API: ${why}`, { cause }) };
    }
    return readAnswer(response, text);
  } finally {
    attempt.clear();
  }
}

/** A 2xx answer's JSON, or the error of any other answer, with the API's message when it sent its envelope. */
function readAnswer(response: Response, text: string): { value: unknown } | { error: AvnApiError } {
  const retryAfter = parseRetryAfter(response.headers.get("retry-after"));
  if (response.status === 204) return { value: undefined };
  let parsed: unknown;
  try {
    parsed = parseJsonExact(text);
  } catch (cause) {
    if (cause instanceof SyntaxError) {
      const message = `HTTP ${response.status}: the answer is not the API's JSON (${response.headers.get("content-type") ?? "no content type"})`;
      return { error: new AvnApiError(response.status, message, { retryAfter, cause }) };
    }
    throw cause;
  }
  if (response.ok) return { value: parsed };
  const message =
    typeof parsed === "object" && parsed !== null && typeof (parsed as { message?: unknown }).message === "string"
      ? (parsed as { message: string }).message
      : `HTTP ${response.status}`;
  return { error: new AvnApiError(response.status, message, { retryAfter }) };
}

/** How long to wait before retrying after `error`, or undefined when retrying cannot help. */
function retryDelayMs(error: AvnApiError, maxRetryAfter: number, attempt: number): number | undefined {
  const { status, retryAfter } = error;
  const retryable = status === 0 || status === 429 || (status >= 500 && status !== 501);
  if (!retryable) return undefined;
  if (retryAfter !== undefined) return retryAfter <= maxRetryAfter ? retryAfter * 1000 : undefined;
  if (status === 429) return undefined;
  return backoffMs(attempt);
}

/** 250 ms doubling per attempt up to 4 s, each drawn from its upper half so that clients do not retry in step. */
function backoffMs(attempt: number): number {
  const ceiling = Math.min(4_000, 250 * 2 ** attempt);
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

/** `Retry-After` in seconds: delta seconds, or an HTTP date (RFC 9110, 10.2.3); undefined when absent or unreadable. */
export function parseRetryAfter(header: string | null, now = Date.now()): number | undefined {
  if (header === null) return undefined;
  const trimmed = header.trim();
  if (/^[0-9]+$/.test(trimmed)) return Number(trimmed);
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
}

/** An abort signal for one attempt: the caller's, or the attempt's own timeout, whichever comes first. */
function withTimeout(timeoutMs: number, outer: AbortSignal | undefined) {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new DOMException(`no answer within ${timeoutMs} ms`, "TimeoutError"));
  }, timeoutMs);
  const forward = () => controller.abort(outer?.reason);
  if (outer?.aborted === true) forward();
  else outer?.addEventListener("abort", forward, { once: true });
  return {
    signal: controller.signal,
    timedOut: () => timedOut,
    clear: () => {
      clearTimeout(timer);
      outer?.removeEventListener("abort", forward);
    },
  };
}

/** Waits `ms`, or rejects with the caller's abort reason. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted === true) {
      reject(signal.reason as Error);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason as Error);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  // Node's fetch says only "fetch failed"; the reason (ECONNREFUSED, a DNS failure) is its cause.
  const cause = (error as { cause?: unknown }).cause;
  return cause instanceof Error ? `${error.message} (${cause.message})` : error.message;
}

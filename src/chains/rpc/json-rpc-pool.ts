import { UpstreamAttemptError, UpstreamUnavailableError } from "./errors.ts";

export interface JsonRpcPoolOptions {
  /** Upstream JSON-RPC URLs, tried in order; a failing one is skipped for `cooldownMs`. */
  urls: readonly string[];
  /** Per-attempt timeout. */
  timeoutMs?: number;
  /** Attempts per request over all URLs (first try included). */
  maxAttempts?: number;
  /** Backoff before the n-th retry: `backoffMs * 2^(n-1)`. */
  backoffMs?: number;
  cooldownMs?: number;
  /** Counts every HTTP request sent upstream (metrics, benchmarks). */
  onUpstreamRequest?: (outcome: "ok" | "error") => void;
}

// Errors every upstream would give alike: retrying elsewhere cannot help. Others (rate limited, block not
// yet known by a lagging node, internal errors) are retried on the next upstream.
const DETERMINISTIC_ERROR_CODES = new Set([3, -32600, -32601, -32602]);

interface JsonRpcResponse {
  jsonrpc: "2.0";
  id: number;
  result?: unknown;
  error?: { code: number; message: string };
}

/** A JSON-RPC error answer. Deterministic ones (invalid params, execution reverted) are not retried. */
export class JsonRpcResponseError extends Error {
  readonly code: number;

  constructor(code: number, message: string) {
    super(message);
    this.name = "JsonRpcResponseError";
    this.code = code;
  }
}

/**
 * JSON-RPC over HTTP to several upstream URLs with a timeout per attempt, retries with exponential
 * backoff, and failover: a URL that fails is cooled down and the next one is tried. Errors name the
 * upstream by its position (`upstream #2`), never by URL.
 */
export class JsonRpcPool {
  readonly #urls: readonly string[];
  readonly #timeoutMs: number;
  readonly #maxAttempts: number;
  readonly #backoffMs: number;
  readonly #cooldownMs: number;
  readonly #onUpstreamRequest: JsonRpcPoolOptions["onUpstreamRequest"];
  readonly #coolingUntil: number[];
  #nextId = 1;

  constructor(options: JsonRpcPoolOptions) {
    if (options.urls.length === 0) throw new Error("at least one upstream RPC URL is required");
    this.#urls = options.urls;
    this.#timeoutMs = options.timeoutMs ?? 5_000;
    this.#maxAttempts = options.maxAttempts ?? Math.max(3, options.urls.length);
    this.#backoffMs = options.backoffMs ?? 100;
    this.#cooldownMs = options.cooldownMs ?? 10_000;
    this.#onUpstreamRequest = options.onUpstreamRequest;
    this.#coolingUntil = options.urls.map(() => 0);
  }

  /** Sends one call; resolves with its `result`. */
  async request<T>(method: string, params: unknown[]): Promise<T> {
    let lastError: unknown;
    for (let attempt = 0; attempt < this.#maxAttempts; attempt += 1) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, this.#backoffMs * 2 ** (attempt - 1)));
      const index = this.#pickUpstream(attempt);
      try {
        return (await this.#send(index, method, params)) as T;
      } catch (error) {
        if (error instanceof JsonRpcResponseError && DETERMINISTIC_ERROR_CODES.has(error.code)) throw error;
        lastError = error;
        this.#coolingUntil[index] = Date.now() + this.#cooldownMs;
      }
    }
    throw new UpstreamUnavailableError(`every upstream failed ${method} (${this.#maxAttempts} attempts)`, { cause: lastError });
  }

  /** The first upstream not cooling down, rotating on retries so that each attempt can land elsewhere. */
  #pickUpstream(attempt: number): number {
    const now = Date.now();
    const count = this.#urls.length;
    for (let offset = 0; offset < count; offset += 1) {
      const index = (attempt + offset) % count;
      if (this.#coolingUntil[index] <= now) return index;
    }
    return attempt % count; // all cooling down: try anyway, in turn
  }

  async #send(index: number, method: string, params: unknown[]): Promise<unknown> {
    const id = this.#nextId++;
    const upstream = `upstream #${index + 1}`;
    let response: Response;
    try {
      response = await fetch(this.#urls[index], {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id, method, params }),
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
    } catch (error) {
      this.#onUpstreamRequest?.("error");
      const timedOut = (error as Error).name === "TimeoutError";
      throw new UpstreamAttemptError(`${upstream} ${timedOut ? `timed out after ${this.#timeoutMs} ms` : "is unreachable"}`, true);
    }
    let body: JsonRpcResponse;
    try {
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      body = (await response.json()) as JsonRpcResponse;
      if (body === null || typeof body !== "object" || body.id !== id || (body.result === undefined && body.error === undefined)) {
        throw new Error("not a JSON-RPC response to this request");
      }
    } catch (error) {
      this.#onUpstreamRequest?.("error");
      throw new UpstreamAttemptError(`${upstream} answered garbage: ${(error as Error).message}`, true);
    }
    this.#onUpstreamRequest?.("ok");
    if (body.error !== undefined) throw new JsonRpcResponseError(body.error.code, body.error.message);
    return body.result;
  }
}

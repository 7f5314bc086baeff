import { UpstreamAttemptError, UpstreamUnavailableError } from "./errors.ts";
import { Failover, type FailoverOptions } from "./failover.ts";
import { AvnError } from "@avn/protocol/errors";

export type JsonRpcPoolOptions = FailoverOptions;

// Errors every upstream would give alike: retrying elsewhere cannot help. Others (rate limited, block not
// yet known by a lagging node, internal errors) are retried on the next upstream.
const DETERMINISTIC_ERROR_CODES = new Set([3, -32600, -32601, -32602]);

function isDeterministic(error: unknown): boolean {
  return error instanceof JsonRpcResponseError && (DETERMINISTIC_ERROR_CODES.has(error.rpcCode) || isCallFailure(error));
}

/**
 * Whether an eth_call failed in the EVM itself (reverted, or ran out of gas): the same on every upstream.
 * Clients disagree on codes (geth -32000 "out of gas", anvil -32603 "EVM error OutOfGas", 3 for reverts),
 * so the message decides where the code cannot.
 */
export function isCallFailure(error: unknown): boolean {
  return error instanceof JsonRpcResponseError && (error.rpcCode === 3 || /out ?of ?gas|execution reverted/i.test(error.message));
}

interface JsonRpcResponse {
  jsonrpc: "2.0";
  id: number;
  result?: unknown;
  error?: { code: number; message: string };
}

/** A JSON-RPC error answer. Deterministic ones (invalid params, execution reverted) are not retried. */
export class JsonRpcResponseError extends AvnError<"JSON_RPC_ERROR"> {
  /** The JSON-RPC error code the upstream answered. */
  readonly rpcCode: number;

  constructor(rpcCode: number, message: string) {
    super("JSON_RPC_ERROR", message);
    this.name = "JsonRpcResponseError";
    this.rpcCode = rpcCode;
  }
}

/**
 * JSON-RPC over HTTP to several upstream URLs with a timeout per attempt, retries with exponential
 * backoff, and failover: a URL that fails is cooled down and the next one is tried. Errors name the
 * upstream by its position (`upstream #2`), never by URL.
 */
export class JsonRpcPool {
  readonly #urls: readonly string[];
  readonly #failover: Failover;
  readonly #onUpstreamRequest: JsonRpcPoolOptions["onUpstreamRequest"];
  #nextId = 1;

  constructor(options: JsonRpcPoolOptions) {
    this.#failover = new Failover(options);
    this.#urls = options.urls;
    this.#onUpstreamRequest = options.onUpstreamRequest;
  }

  /** Sends one call; resolves with its `result`. */
  async request<T>(method: string, params: unknown[]): Promise<T> {
    try {
      return (await this.#failover.run((index) => this.#send(index, method, params), isDeterministic)) as T;
    } catch (error) {
      if (isDeterministic(error)) throw error;
      throw new UpstreamUnavailableError(`every upstream failed ${method} (${this.#failover.maxAttempts} attempts)`, { cause: error });
    }
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
        signal: AbortSignal.timeout(this.#failover.timeoutMs),
      });
    } catch (error) {
      this.#onUpstreamRequest?.("error");
      const timedOut = (error as Error).name === "TimeoutError";
      throw new UpstreamAttemptError(`${upstream} ${timedOut ? `timed out after ${this.#failover.timeoutMs} ms` : "is unreachable"}`, true);
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

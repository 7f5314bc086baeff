import { createDefaultRpcTransport, type RpcTransport } from "@solana/kit";

import { UpstreamUnavailableError } from "../rpc/errors.ts";

export interface FailoverTransportOptions {
  urls: readonly string[];
  timeoutMs?: number;
  maxAttempts?: number;
  backoffMs?: number;
  cooldownMs?: number;
  onUpstreamRequest?: (outcome: "ok" | "error") => void;
}

/**
 * A kit RPC transport over several Solana JSON-RPC URLs: each attempt has a timeout, a failing URL is
 * cooled down and the next one tried, with exponential backoff between attempts. JSON-RPC error answers
 * are the upstream's verdict and pass through untouched (kit turns them into `SolanaError`s); only
 * transport failures (down, slow, HTTP errors, unparsable answers) are retried. The final error names
 * no URL.
 */
export function createFailoverTransport(options: FailoverTransportOptions): RpcTransport {
  if (options.urls.length === 0) throw new Error("at least one Solana RPC URL is required");
  const transports = options.urls.map((url) => createDefaultRpcTransport({ url }));
  const timeoutMs = options.timeoutMs ?? 5_000;
  const maxAttempts = options.maxAttempts ?? Math.max(3, options.urls.length);
  const backoffMs = options.backoffMs ?? 100;
  const cooldownMs = options.cooldownMs ?? 10_000;
  const coolingUntil = options.urls.map(() => 0);

  const pick = (attempt: number) => {
    const now = Date.now();
    for (let offset = 0; offset < transports.length; offset += 1) {
      const index = (attempt + offset) % transports.length;
      if (coolingUntil[index] <= now) return index;
    }
    return attempt % transports.length;
  };

  const transport = async (config: Parameters<RpcTransport>[0]) => {
    let lastError: unknown;
    for (let attempt = 0; attempt < maxAttempts; attempt += 1) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, backoffMs * 2 ** (attempt - 1)));
      const index = pick(attempt);
      const signal = config.signal === undefined ? AbortSignal.timeout(timeoutMs) : AbortSignal.any([config.signal, AbortSignal.timeout(timeoutMs)]);
      try {
        const response = await transports[index]({ ...config, signal });
        if (response === null || typeof response !== "object" || !("result" in response || "error" in response)) {
          throw new Error("not a JSON-RPC response");
        }
        options.onUpstreamRequest?.("ok");
        return response;
      } catch (error) {
        if (config.signal?.aborted) throw error; // the caller gave up: no failover
        options.onUpstreamRequest?.("error");
        lastError = error;
        coolingUntil[index] = Date.now() + cooldownMs;
      }
    }
    throw new UpstreamUnavailableError(`every Solana upstream failed (${maxAttempts} attempts)`, {
      cause: new Error((lastError as Error)?.name ?? "unknown failure"), // the original may carry the URL
    });
  };
  return transport as RpcTransport;
}

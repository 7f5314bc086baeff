import { createDefaultRpcTransport, type RpcTransport } from "@solana/kit";

import { UpstreamUnavailableError } from "../rpc/errors.ts";
import { Failover, type FailoverOptions } from "../rpc/failover.ts";

/** The caller gave up (its own abort signal): not an upstream failure, so no failover. */
class CallerAborted extends Error {}

/**
 * A kit RPC transport over several Solana JSON-RPC URLs, with the same timeouts, backoff and failover as
 * the EVM client (`Failover`). JSON-RPC error answers are the upstream's verdict and pass through
 * untouched (kit turns them into `SolanaError`s); only transport failures (down, slow, HTTP errors,
 * unparsable answers) are retried. The final error names no URL.
 */
export function createFailoverTransport(options: FailoverOptions): RpcTransport {
  const failover = new Failover(options);
  const transports = options.urls.map((url) => createDefaultRpcTransport({ url }));

  const transport = async (config: Parameters<RpcTransport>[0]) => {
    const attempt = async (index: number) => {
      const timeout = AbortSignal.timeout(failover.timeoutMs);
      const signal = config.signal === undefined ? timeout : AbortSignal.any([config.signal, timeout]);
      try {
        const response = await transports[index]({ ...config, signal });
        if (response === null || typeof response !== "object" || !("result" in response || "error" in response)) {
          throw new Error("not a JSON-RPC response");
        }
        options.onUpstreamRequest?.("ok");
        return response;
      } catch (error) {
        if (config.signal?.aborted) throw new CallerAborted("aborted by the caller", { cause: error });
        options.onUpstreamRequest?.("error");
        throw error;
      }
    };
    try {
      return await failover.run(attempt, (error) => error instanceof CallerAborted);
    } catch (error) {
      if (error instanceof CallerAborted) throw error.cause;
      throw new UpstreamUnavailableError(`every Solana upstream failed (${failover.maxAttempts} attempts)`, {
        cause: new Error((error as Error)?.name ?? "unknown failure"), // the original may carry the URL
      });
    }
  };
  return transport as RpcTransport;
}

import { createDefaultRpcTransport, type RpcTransport } from "@solana/kit";

import { UpstreamUnavailableError } from "../rpc/errors.ts";
import { Failover, type FailoverOptions } from "../rpc/failover.ts";
import { AvnError } from "@avn/protocol/errors";

/** The caller gave up (its own abort signal): not an upstream failure, so no failover. */
class CallerAborted extends AvnError<"CALLER_ABORTED"> {
  constructor(message: string, options?: { cause?: unknown }) {
    super("CALLER_ABORTED", message, options);
    this.name = "CallerAborted";
  }
}

// JSON-RPC errors about the upstream's own state, which another upstream may not share: block not
// available (-32004), node unhealthy or behind (-32005), block status not yet available (-32014), minimum
// context slot not reached (-32016). They are retried on the next URL like transport failures.
const UPSTREAM_STATE_ERRORS = new Set([-32004, -32005, -32014, -32016]);

class UpstreamStateError extends AvnError<"UPSTREAM_STATE"> {
  constructor(message: string) {
    super("UPSTREAM_STATE", message);
    this.name = "UpstreamStateError";
  }
}

/**
 * A kit RPC transport over several Solana JSON-RPC URLs, with the same timeouts, backoff and failover as
 * the EVM client (`Failover`). Transport failures (down, slow, HTTP errors, unparsable answers) and
 * errors about the upstream's own state (UPSTREAM_STATE_ERRORS) are retried; other JSON-RPC error
 * answers are the request's verdict and pass through untouched (kit turns them into `SolanaError`s).
 * The final error names no URL.
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
        // kit parses every JSON number as a bigint.
        const code = (response as { error?: { code?: unknown } }).error?.code;
        if ((typeof code === "bigint" || typeof code === "number") && UPSTREAM_STATE_ERRORS.has(Number(code))) {
          throw new UpstreamStateError(`upstream state error ${code}`);
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

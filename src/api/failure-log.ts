import { describeError } from "../common/describe-error.ts";

/**
 * What the log may say about a failure, as pino fields: its class name, its code, and its description
 * by the services' one describer, which hides URLs, hosts, credentials and keys (an upstream may echo
 * its URL, a socket error names its host and port).
 */
export function failureFields(error: unknown): Record<string, unknown> {
  const { name, code } = (error ?? {}) as { name?: unknown; code?: unknown };
  return {
    type: typeof name === "string" ? name : typeof error,
    ...(typeof code === "string" || typeof code === "number" ? { code: String(code) } : {}),
    message: describeError(error),
  };
}

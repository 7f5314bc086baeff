/** Why a bridge operation was refused: a stable code for programs, a sentence for people. */
export type BridgeErrorCode =
  | "CONFIGURATION"
  | "INVALID_ARGUMENT"
  | "WRONG_NETWORK"
  | "INSUFFICIENT_BALANCE"
  | "ALLOWANCE_TOO_LOW"
  | "MESSAGE_NOT_FOUND"
  | "NOT_A_WITHDRAWAL"
  | "NOT_PROVABLE_YET"
  | "NOT_PROVEN"
  | "ALREADY_PROVEN"
  | "FINALIZATION_PERIOD_NOT_OVER"
  | "ALREADY_FINALIZED"
  | "DEPOSIT_FAILED"
  | "TIMEOUT";

/**
 * An error the bridge expected and can explain. Messages name the next step and never carry a key or
 * an RPC URL (URLs of hosted RPCs embed API keys).
 */
export class BridgeError extends Error {
  readonly code: BridgeErrorCode;

  constructor(code: BridgeErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "BridgeError";
    this.code = code;
  }
}

/**
 * A one-line description of an error nobody expected, for people: the library's short reason when it
 * has one (ethers puts the request URL and body into its long messages), with every URL replaced.
 */
export function describeUnexpected(error: unknown): string {
  const details = error as { reason?: unknown; code?: unknown; message?: unknown } | null;
  const reason = typeof details?.reason === "string" ? details.reason : String(details?.message ?? error);
  const code = typeof details?.code === "string" ? ` (${details.code})` : "";
  return `${redactUrls(reason.split("\n")[0])}${code}`;
}

/** Replaces URLs (hosted RPC URLs carry API keys in their path or query) with a placeholder. */
export function redactUrls(text: string): string {
  return text.replace(/\b(?:https?|wss?):\/\/[^\s"'<>]+/gi, "<url>");
}

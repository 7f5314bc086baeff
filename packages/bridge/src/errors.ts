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
 * A one-line description of an error nobody expected, for people (the library's short reason, with every
 * URL, credential and key replaced), and that replacement alone. Both are the services' own describer
 * (src/common/describe-error.ts), imported across the workspace boundary: it has no imports, so this
 * ethers-v5 package takes none of the root's dependencies with it, and one set of patterns decides what
 * is hidden everywhere. Node resolves the package through its workspace symlink to this real path, so
 * the relative path holds for `npm run bridge`, the tests and `tsc -p packages/bridge` alike.
 */
export { describeError as describeUnexpected, redactSecrets as redactUrls } from "../../../src/common/describe-error.ts";

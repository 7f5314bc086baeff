import { AvnError } from "@avn/protocol/errors";

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
export class BridgeError extends AvnError<BridgeErrorCode> {
  constructor(code: BridgeErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = "BridgeError";
  }
}

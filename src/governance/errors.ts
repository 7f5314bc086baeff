import { AvnError } from "@avn/protocol/errors";

export type GovernanceErrorCode =
  | "TOO_EARLY"
  | "WRONG_STATE"
  | "NO_VOTES"
  | "BELOW_THRESHOLD"
  | "ALREADY_VOTED"
  | "UNKNOWN_PROPOSAL"
  | "L2_CHECK_FAILED"
  | "NO_SIGNER"
  | "CONFIGURATION"
  | "INVALID_INPUT";

/** A step that cannot be taken now, said plainly (with the time left where waiting is the answer). */
export class GovernanceError extends AvnError<GovernanceErrorCode> {
  constructor(code: GovernanceErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = "GovernanceError";
  }
}

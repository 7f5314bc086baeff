import { AvnError, httpStatusCode } from "@avn/protocol/errors";

/**
 * A refusal the credits service answers with its HTTP status (its message is shown to the caller as it is);
 * its code is the status's name (`CONFLICT` for 409).
 */
export class CreditsError extends AvnError {
  readonly status: number;

  constructor(status: number, message: string, options?: { cause?: unknown }) {
    super(httpStatusCode(status), message, options);
    this.name = "CreditsError";
    this.status = status;
  }
}

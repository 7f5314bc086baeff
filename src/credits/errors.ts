/** A refusal the credits service answers with its HTTP status (its message is shown to the caller as it is). */
export class CreditsError extends Error {
  readonly status: number;

  constructor(status: number, message: string) {
    super(message);
    this.name = "CreditsError";
    this.status = status;
  }
}

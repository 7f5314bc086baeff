/**
 * The one error base of the repository (after viem's `BaseError`): every error a service, a CLI or the
 * bridge expects and can explain extends it. `code` is stable and machine-readable: programs branch on it,
 * the CLIs print it (`error [CODE]: message`), tests assert it, and it is never reworded. `message` is one
 * short sentence for people that names the next step and never holds a key or a URL; `cause` keeps what
 * went wrong underneath, for logs. Anything thrown that is not an `AvnError` was not expected.
 *
 * No Node API here: the web app imports this module as it is.
 */
export class AvnError<Code extends string = string> extends Error {
  readonly code: Code;

  constructor(code: Code, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "AvnError";
    this.code = code;
  }
}

/** The codes of the HTTP statuses the services answer errors with, for errors that carry a status. */
const HTTP_STATUS_CODES: Readonly<Record<number, string>> = {
  400: "BAD_REQUEST",
  401: "UNAUTHORIZED",
  402: "PAYMENT_REQUIRED",
  403: "FORBIDDEN",
  404: "NOT_FOUND",
  409: "CONFLICT",
  413: "PAYLOAD_TOO_LARGE",
  429: "RATE_LIMITED",
  500: "INTERNAL",
  501: "NOT_IMPLEMENTED",
  502: "BAD_GATEWAY",
  503: "UNAVAILABLE",
  504: "GATEWAY_TIMEOUT",
};

/** The code of an error answered with HTTP `status`: its name (`NOT_FOUND`), or `HTTP_<status>` for a rarer one. */
export function httpStatusCode(status: number): string {
  return HTTP_STATUS_CODES[status] ?? `HTTP_${status}`;
}

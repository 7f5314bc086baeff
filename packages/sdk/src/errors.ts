/**
 * Every failure of an API call, after the client's retries: `status` is the HTTP status (the API's error
 * envelope repeats it), `message` the API's own message (`"Rate limit exceeded"`, `"user_address must be 0x
 * followed by 40 hexadecimal digits"`), `retryAfter` the seconds its `Retry-After` header asked for.
 *
 * Two cases have no API message: a request that never got an answer (the network, a timeout) has status
 * `0`, as `fetch` reports it in browsers, with the underlying error as `cause`; an answer that is not the
 * API's JSON (a proxy's HTML page, a truncated body) keeps its HTTP status and says so in `message`.
 */
export class AvnApiError extends Error {
  readonly status: number;
  /** Seconds, from the answer's `Retry-After` (delta seconds or an HTTP date); undefined when it sent none. */
  readonly retryAfter: number | undefined;

  constructor(status: number, message: string, options: { retryAfter?: number; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "AvnApiError";
    this.status = status;
    this.retryAfter = options.retryAfter;
  }
}

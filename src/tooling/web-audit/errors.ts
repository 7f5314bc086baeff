// What `npm run audit:web` refuses or cannot do, each with a code and a message that says what to do.
import { AvnError } from "@avn/protocol/errors";

export type WebAuditErrorCode =
  /** The command line does not match the options. */
  | "USAGE"
  /** No `--url`, and no running stack with a web app in `.devnet/stack.json`. */
  | "NO_STACK"
  /** No Chromium at the path the audit drives. */
  | "NO_CHROMIUM"
  /** The web app does not answer, or shows no header of pages. */
  | "APP_UNREACHABLE"
  /** `--pages` names a page the header does not offer. */
  | "UNKNOWN_PAGE"
  /** A page never showed its heading, or its reads never ended. */
  | "PAGE_NOT_RENDERED"
  /** Lighthouse returned no result. */
  | "LIGHTHOUSE_FAILED";

export class WebAuditError extends AvnError<WebAuditErrorCode> {
  constructor(code: WebAuditErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = "WebAuditError";
  }
}

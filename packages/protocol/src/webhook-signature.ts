/**
 * The signature of a webhook delivery, as Stripe signs its own: the header
 * `Avn-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, t + "." + body)>`. The timestamp is inside the MAC
 * so that a captured delivery cannot be replayed later with a fresh `t`; the tolerance bounds how late a
 * replay of the whole header can come. Several `v1=` entries may appear while a secret is being rotated.
 *
 * The API signs with it and the SDK verifies with it, so both sides share one definition. No Node API here:
 * the web app and the SDK bundle this module for the browser, hence @noble/hashes rather than node:crypto.
 */
import { hmac } from "@noble/hashes/hmac.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex, concatBytes, hexToBytes, utf8ToBytes } from "@noble/hashes/utils.js";

import { AvnError } from "./errors.ts";

/** The request header that carries the signature, as the API sends it. */
export const WEBHOOK_SIGNATURE_HEADER = "Avn-Signature";
/** The same name as Node's `IncomingMessage.headers` and most frameworks key it: lower case. */
export const WEBHOOK_SIGNATURE_HEADER_LOWER = "avn-signature";
/** How far (seconds) a delivery's timestamp may be from the receiver's clock, either way: Stripe's default. */
export const DEFAULT_WEBHOOK_TOLERANCE_SECONDS = 300;

/** Why a signature was refused: no header, a header that does not parse, a timestamp too far off, no MAC matches. */
export type WebhookSignatureFailure = "missing" | "malformed" | "stale" | "mismatch";

/** A delivery whose signature does not hold. The message says why and never contains the secret. */
export class WebhookSignatureError extends AvnError<"WEBHOOK_SIGNATURE"> {
  readonly reason: WebhookSignatureFailure;

  constructor(reason: WebhookSignatureFailure, message: string) {
    super("WEBHOOK_SIGNATURE", message);
    this.name = "WebhookSignatureError";
    this.reason = reason;
  }
}

/** The parts of a signature header: its timestamp and every `v1` MAC (lower-case hex), in order. */
export interface WebhookSignatureParts {
  timestamp: number;
  signatures: string[];
}

const SHA256_HEX = /^[0-9a-f]{64}$/;
// At most 15 digits: any safe integer of seconds we will meet, and no precision lost in Number().
const TIMESTAMP = /^[0-9]{1,15}$/;

/**
 * Parses a signature header. Entries of other schemes (`v0=`, a future `v2=`) are skipped so that a
 * sender may add a scheme before every receiver knows it. Throws `WebhookSignatureError` ("missing" when
 * there is no header, "malformed" otherwise).
 */
export function webhookSignatureParts(header: string | null | undefined): WebhookSignatureParts {
  if (header === null || header === undefined || header.trim() === "") {
    throw new WebhookSignatureError("missing", `The ${WEBHOOK_SIGNATURE_HEADER} header is missing`);
  }
  const malformed = (problem: string) =>
    new WebhookSignatureError("malformed", `The ${WEBHOOK_SIGNATURE_HEADER} header is malformed: ${problem}`);
  let timestamp: number | undefined;
  const signatures: string[] = [];
  for (const item of header.split(",")) {
    const entry = item.trim();
    if (entry === "") continue;
    const equals = entry.indexOf("=");
    if (equals <= 0) throw malformed("every entry must be scheme=value");
    const scheme = entry.slice(0, equals);
    const value = entry.slice(equals + 1);
    if (scheme === "t") {
      // Two timestamps would leave it open which one the MAC covers.
      if (timestamp !== undefined) throw malformed("more than one t= entry");
      if (!TIMESTAMP.test(value)) throw malformed("t= must be a whole number of seconds");
      timestamp = Number(value);
    } else if (scheme === "v1") {
      if (!SHA256_HEX.test(value)) throw malformed("v1= must be 64 lower-case hex digits");
      signatures.push(value);
    }
  }
  if (timestamp === undefined) throw malformed("no t= entry");
  if (signatures.length === 0) throw malformed("no v1= entry");
  return { timestamp, signatures };
}

function requireSecret(secret: string): void {
  // A programming or configuration error, not a bad delivery: a plain TypeError.
  if (typeof secret !== "string" || secret === "") throw new TypeError("The webhook secret must be a non-empty string");
}

/** The MAC of `body` at `timestamp`: HMAC-SHA256 keyed with the secret's UTF-8 bytes over `t + "." + body`. */
function webhookMac(body: string | Uint8Array, secret: string, timestamp: number): Uint8Array {
  // A byte body is signed as it is: the receiver verifies the raw bytes it got, before any parsing.
  const bodyBytes = typeof body === "string" ? utf8ToBytes(body) : body;
  return hmac(sha256, utf8ToBytes(secret), concatBytes(utf8ToBytes(`${timestamp}.`), bodyBytes));
}

/** The `Avn-Signature` header value of a delivery of `body` sent at `timestampSeconds`: `t=<t>,v1=<hex>`. */
export function signWebhook(body: string | Uint8Array, secret: string, timestampSeconds: number): string {
  requireSecret(secret);
  if (!Number.isSafeInteger(timestampSeconds) || timestampSeconds < 0) {
    throw new TypeError("The webhook timestamp must be a whole, non-negative number of seconds");
  }
  return `t=${timestampSeconds},v1=${bytesToHex(webhookMac(body, secret, timestampSeconds))}`;
}

/** Whether two byte strings are equal, in a time that depends on their length only (no early exit). */
function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i += 1) difference |= a[i] ^ b[i];
  return difference === 0;
}

/**
 * Checks a delivery's signature header against the raw body received (a string is UTF-8 encoded, bytes are
 * used as they are): one `v1` MAC must match, and the timestamp must be within `toleranceSeconds` of
 * `nowSeconds` either way (a clock ahead is as suspect as a replay). Returns nothing; throws
 * `WebhookSignatureError` whose `reason` says what failed.
 */
export function verifyWebhook(
  body: string | Uint8Array,
  header: string | null | undefined,
  secret: string,
  toleranceSeconds: number = DEFAULT_WEBHOOK_TOLERANCE_SECONDS,
  nowSeconds: number = Math.floor(Date.now() / 1000),
): void {
  requireSecret(secret);
  if (!Number.isFinite(toleranceSeconds) || toleranceSeconds < 0) {
    throw new TypeError("The webhook tolerance must be a non-negative number of seconds");
  }
  const { timestamp, signatures } = webhookSignatureParts(header);
  const expected = webhookMac(body, secret, timestamp);
  // Every candidate is compared, matched or not: the time says nothing about which one matched.
  let matched = false;
  for (const signature of signatures) matched = equalBytes(hexToBytes(signature), expected) || matched;
  // The MAC first: a forged header is reported as a mismatch whatever its timestamp, and "stale" means a
  // genuine delivery that came too late (a replay, or a clock off).
  if (!matched) throw new WebhookSignatureError("mismatch", "No signature of the delivery matches its body and the secret");
  if (Math.abs(nowSeconds - timestamp) > toleranceSeconds) {
    throw new WebhookSignatureError(
      "stale",
      `The delivery's timestamp is ${nowSeconds - timestamp} s from now, beyond the tolerance of ${toleranceSeconds} s`,
    );
  }
}

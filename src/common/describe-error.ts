// The one error describer of the services (API, node, the command lines): free of imports, so any layer
// may use it.

/**
 * What never reaches a log line or an error shown to people, in the order it is replaced. Hosted RPC
 * URLs carry their API key in the path, the query or the user part; database and Redis URLs carry a
 * password; a socket error names the host and port it tried; a wallet error may echo its private key.
 */
const REDACTIONS: readonly (readonly [RegExp, string | ((match: string) => string)])[] = [
  // Anything written `scheme://…` (http, https, ws, wss, redis, postgres…), with or without a user and
  // password. Punctuation that closes the sentence around a URL stays outside the match.
  [/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'`<>]*[^\s"'`<>.,;:!?)\]}]/gi, "<url>"],
  // `user:password@host` without a scheme (a driver's connection string).
  [/[^\s@"'`<>/:]+:[^\s@"'`<>/]+@[a-z0-9.-]+(?::\d{1,5})?/gi, "<host>"],
  // A host with a port (`connect ECONNREFUSED 10.0.0.7:8545`, `rpc.example:443`, `[::1]:8545`).
  [/(?:\blocalhost|\[[0-9a-f:.]+\]|\b(?:[a-z0-9-]+\.)+[a-z0-9-]+):\d{1,5}\b/gi, "<host>"],
  // API keys in a query string or a key=value pair without the URL around them.
  [/\b((?:x-)?(?:api[-_]?key|apikey|access[-_]?token|auth[-_]?token|token|secret|password|passwd|key)=)[^&\s"'`<>,;)]+/gi, "$1<redacted>"],
  [/\bBearer\s+[^\s"'`<>,;]+/g, "Bearer <redacted>"],
  // This API's own keys (`avn_` + base64url).
  [/\bavn_[A-Za-z0-9_-]{20,}/g, "<api-key>"],
  // Private keys (0x + 64 hex digits) and other long hex secrets. Addresses (0x + 40) stay: they are
  // public and what a reader needs. Transaction hashes look like private keys and go too.
  [/(?<![0-9a-z])(?:0x)?[0-9a-f]{32,}(?![0-9a-z])/gi, (match) => (/^0x[0-9a-f]{40}$/i.test(match) ? match : "<hex>")],
];

/**
 * The details ethers appends to its long messages, ` (argument="key", value="0x…", code=…, version=…)`
 * in v5 and v6 alike: they may echo an argument (a private key given to a wallet), a request body or a URL.
 */
const ETHERS_DETAILS = /\s\(\w+=[\s\S]*\bversion=[^)]*\)\s*$/;

/** How many nested errors (`error.error`, `error.cause`) are followed. */
const MAX_NESTING = 4;

/** `text` with every URL, host:port, credential, API key and long hex secret replaced by a placeholder. */
export function redactSecrets(text: string): string {
  let redacted = text;
  for (const [pattern, replacement] of REDACTIONS) {
    redacted = typeof replacement === "string" ? redacted.replace(pattern, replacement) : redacted.replace(pattern, replacement);
  }
  return redacted;
}

/**
 * An error in one line for people, without URLs or secrets: the library's short message where it has one
 * (ethers v6 `shortMessage`, ethers v5 `reason`; their long messages carry the request URL, its body and
 * the arguments), else the first line of the message; its string code (`SERVER_ERROR`, `ECONNREFUSED`)
 * unless the text says it already; then the errors nested in it, `: `-separated: the node's own JSON-RPC
 * error ethers keeps in `error`, and the `cause` chain (fetch's "fetch failed" says why only there).
 */
export function describeError(error: unknown): string {
  let text = "";
  const seen = new Set<unknown>();
  let current: unknown = error;
  for (let depth = 0; depth <= MAX_NESTING && (depth === 0 || current !== undefined) && !seen.has(current); depth += 1) {
    seen.add(current);
    const part = ownText(current);
    if (part !== "" && !text.includes(part)) text = text === "" ? part : `${text}: ${part}`;
    current = nested(current);
  }
  return text === "" ? "unknown error" : text;
}

/** One error's own line: short message or first line, its code, nothing nested. */
function ownText(error: unknown): string {
  if (typeof error !== "object" || error === null) return redactSecrets(String(error).split("\n")[0]).trim();
  const { shortMessage, reason, message, code } = error as { shortMessage?: unknown; reason?: unknown; message?: unknown; code?: unknown };
  const candidates = [shortMessage, reason, message];
  const chosen = candidates.find((candidate): candidate is string => typeof candidate === "string" && candidate !== "");
  // A thrown plain object says nothing useful as `[object Object]`; its kind is what can be said safely.
  let text = chosen ?? (typeof code === "string" ? "" : `non-error value (${error.constructor?.name ?? "object"})`);
  text = redactSecrets(text.split("\n")[0].replace(ETHERS_DETAILS, "")).trim();
  if (typeof code === "string" && code !== "" && !text.includes(code)) text = text === "" ? code : `${text} (${code})`;
  return text;
}

/** The error this one wraps: ethers' `error` (the node's own JSON-RPC error), else the standard `cause`. */
function nested(error: unknown): unknown {
  if (typeof error !== "object" || error === null) return undefined;
  const { error: inner, cause } = error as { error?: unknown; cause?: unknown };
  if (typeof inner === "object" && inner !== null) return inner;
  return cause ?? undefined;
}

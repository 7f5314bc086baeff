import { describeError } from "../common/describe-error.ts";

/**
 * What a failed `eth_sendRawTransaction` means for the transaction, which decides what the sender does
 * with it. `message` is the error as it may be logged (`describeError`: no URLs).
 */
export type SendError = { message: string } &
  /** The RPC already holds this very transaction: it was broadcast. */
  (
    | { kind: "already-known" }
    /** The nonce is spent: by this transaction, mined meanwhile, or by another one signed with the same key. */
    | { kind: "nonce-too-low" }
    /** A lower nonce is missing: the local count ran ahead of the chain's. */
    | { kind: "nonce-too-high" }
    | { kind: "insufficient-funds" }
    /** A transaction with this nonce is pending with fees this one does not beat by the pool's margin. */
    | { kind: "replacement-underpriced" }
    /** The tip is below the least the RPC's pool admits. */
    | { kind: "underpriced" }
    /** The fee cap is below the base fee of the block being built: the base fee rose since the fees were read. */
    | { kind: "fee-cap-below-base-fee" }
    /** More gas than a block holds: never mined as signed. */
    | { kind: "gas-limit-too-high" }
    /** Less gas than the transaction's intrinsic cost: never mined as signed. */
    | { kind: "intrinsic-gas" }
    /** Refused as signed for another reason: oversized data, a tip above the fee cap, a fee above the RPC's cap, an unsupported type. */
    | { kind: "invalid" }
    | { kind: "execution-reverted" }
    /** The RPC did not answer properly (connection, timeout, HTTP error, rate limit, full pool): another URL may. */
    | { kind: "rpc-unavailable" }
    | { kind: "unknown" }
  );

export type SendErrorKind = SendError["kind"];

// ethers v6's own codes (`JsonRpcApiProvider.getRpcError` and its fetch layer), which already read the
// node's text for these cases; they are trusted before any text is read here.
const ETHERS_CODES: Partial<Record<string, SendErrorKind>> = {
  NONCE_EXPIRED: "nonce-too-low",
  INSUFFICIENT_FUNDS: "insufficient-funds",
  REPLACEMENT_UNDERPRICED: "replacement-underpriced",
  CALL_EXCEPTION: "execution-reverted",
  TIMEOUT: "rpc-unavailable",
  SERVER_ERROR: "rpc-unavailable",
  NETWORK_ERROR: "rpc-unavailable",
};

// The texts geth and op-geth (core/error.go, core/txpool/errors.go, the RPC's fee cap), anvil
// (crates/anvil/src/eth/error.rs) and reth return, lower-cased, tried in this order (viem's getNodeError
// is the model). The order matters where texts overlap: "already known" is not "nonce too low" (viem
// folds them; here the first means the transaction is in the pool, the second that its nonce is spent);
// "replacement fee too low" before "fee too low"; anvil's "intrinsic gas too high" (a gas limit above the
// block's) before "intrinsic gas too low".
const NODE_MESSAGES: ReadonlyArray<readonly [SendErrorKind, RegExp]> = [
  ["execution-reverted", /execution reverted/],
  ["fee-cap-below-base-fee", /max fee per gas less than block base fee|fee cap less than block base fee|transaction is outdated/],
  ["already-known", /already known|known transaction|already imported/],
  ["nonce-too-high", /nonce too high/],
  ["nonce-too-low", /nonce too low|nonce has already been used/],
  ["insufficient-funds", /insufficient funds|exceeds transaction sender account balance/],
  ["replacement-underpriced", /replacement transaction underpriced|replacement fee too low|insufficient gas price to replace/],
  ["underpriced", /transaction underpriced|gas price below minimum|tip too low|fee too low/],
  [
    "gas-limit-too-high",
    /intrinsic gas too high|exceeds block gas limit|gas limit reached|greater than the block gas limit|gas limit too high/,
  ],
  ["intrinsic-gas", /intrinsic gas too low/],
  [
    "invalid",
    /oversized data|max priority fee per gas higher than max fee per gas|tip higher than fee cap|higher than 2\^256|exceeds the configured cap|transaction type not supported|invalid sender|invalid chain id/,
  ],
  [
    "rpc-unavailable",
    /rate limit|too many requests|timeout|timed out|service unavailable|bad gateway|connection (refused|reset|closed)|socket hang up|txpool is full/,
  ],
];

// EIP-1474 codes that say the server, not the transaction, failed: resource unavailable, limit exceeded.
const UNAVAILABLE_RPC_CODES = new Set([-32002, -32005]);
// Node's socket errors (ethers passes them through unwrapped) and undici's.
const TRANSPORT_CODES = /^(ECONNREFUSED|ECONNRESET|ECONNABORTED|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EPIPE|EHOSTUNREACH|ENETUNREACH|UND_ERR_\w+)$/;

interface ErrorLike {
  code?: unknown;
  message?: unknown;
  shortMessage?: unknown;
  /** ethers' UNKNOWN_ERROR ("could not coalesce error"): the node's JSON-RPC error object. */
  error?: { code?: unknown; message?: unknown };
  /** ethers' coded errors: the node's JSON-RPC error object under `info`. */
  info?: { error?: { code?: unknown; message?: unknown } };
  cause?: unknown;
}

/**
 * Says what a failed send means: ethers' error code first, where it says something; else the node's own
 * JSON-RPC error (its text, as geth, op-geth, anvil and reth word it, then its code); else the transport's
 * error code. What none of these names is "unknown".
 */
export function classifySendError(error: unknown): SendError {
  return { kind: kindOf(error), message: describeError(error) };
}

function kindOf(error: unknown): SendErrorKind {
  const outer = (error ?? {}) as ErrorLike;
  const byEthers = typeof outer.code === "string" ? ETHERS_CODES[outer.code] : undefined;
  if (byEthers !== undefined) return byEthers;

  const rpc = outer.error ?? outer.info?.error;
  // The node's text where ethers kept it apart, then ethers' own (its long `message` also quotes the
  // request: hex, which no pattern matches).
  const lower = [rpc?.message, outer.shortMessage, outer.message]
    .filter((candidate): candidate is string => typeof candidate === "string")
    .join("\n")
    .toLowerCase();
  for (const [kind, pattern] of NODE_MESSAGES) {
    if (pattern.test(lower)) return kind;
  }
  // JSON-RPC 3 is "execution reverted" with revert data, whatever the text says.
  if (rpc?.code === 3) return "execution-reverted";
  if (typeof rpc?.code === "number" && UNAVAILABLE_RPC_CODES.has(rpc.code)) return "rpc-unavailable";

  let cause: unknown = error;
  for (let depth = 0; typeof cause === "object" && cause !== null && depth < 4; depth += 1) {
    const { code } = cause as { code?: unknown };
    if (typeof code === "string" && TRANSPORT_CODES.test(code)) return "rpc-unavailable";
    cause = (cause as { cause?: unknown }).cause;
  }
  return "unknown";
}

import { AvnError, httpStatusCode } from "@avn/protocol/errors";
import type { Address, Hex, TransactionReceipt } from "viem";

/**
 * Every error the SDK throws, each an `AvnError` (the repository's one error base, bundled into this
 * package) with a stable `code` to branch on and the fields a program needs, so that no caller ever has
 * to match a message: messages are for people and may be reworded. After viem, each call that can fail
 * names what it throws as a union (`RecordAttestationError`, `AvnClientError` …).
 *
 * Each class sets `name` to its own name as a literal, not from `new.target.name`: an integrator's
 * minifier may rename classes, and `name` must survive it.
 */

/**
 * Every failure of an API call, after the client's retries: `status` is the HTTP status (the API's error
 * envelope repeats it), `message` the API's own message (`"Rate limit exceeded"`, `"user_address must be 0x
 * followed by 40 hexadecimal digits"`), `retryAfter` the seconds its `Retry-After` header asked for, `code`
 * the status's name (`RATE_LIMITED`, `NOT_FOUND`, `HTTP_<status>` for a rarer one).
 *
 * Two cases have no API message: a request that never got an answer (the network, a timeout) has status
 * `0` and code `NETWORK`, as `fetch` reports it in browsers, with the underlying error as `cause`; an
 * answer that is not the API's JSON (a proxy's HTML page, a truncated body) keeps its HTTP status and says
 * so in `message`.
 */
export class AvnApiError extends AvnError {
  readonly status: number;
  /** Seconds, from the answer's `Retry-After` (delta seconds or an HTTP date); undefined when it sent none. */
  readonly retryAfter: number | undefined;

  constructor(status: number, message: string, options: { retryAfter?: number; cause?: unknown } = {}) {
    // No `cause` key at all unless there is one: `new Error(message, { cause: undefined })` sets it to undefined.
    super(status === 0 ? "NETWORK" : httpStatusCode(status), message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "AvnApiError";
    this.status = status;
    this.retryAfter = options.retryAfter;
  }
}

/**
 * An argument of the caller's refused before anything is asked or sent: `argument` names it as the
 * message does (`options.verifier`, `options.account`, `gasMarginPercent`, `retries` …).
 */
export class InvalidArgumentError extends AvnError<"INVALID_ARGUMENT"> {
  readonly argument: string;

  constructor(argument: string, message: string) {
    super("INVALID_ARGUMENT", message);
    this.name = "InvalidArgumentError";
    this.argument = argument;
  }
}

/**
 * JSON that is not an attestation as the API serves it: `path` is the first field refused, as written in
 * the JSON (`domain.chainId`, `signatures[0].signer`, `message.verdict`), `""` for the attestation itself.
 */
export class MalformedAttestationError extends AvnError<"MALFORMED_ATTESTATION"> {
  readonly path: string;

  constructor(path: string, problem: string) {
    super("MALFORMED_ATTESTATION", `${path === "" ? "The attestation" : path} ${problem}`);
    this.name = "MalformedAttestationError";
    this.path = path;
  }
}

/** The attestation names a verifier contract (`verifier`, checksummed) other than the one trusted (`trusted`, as given). */
export class UnexpectedVerifierError extends AvnError<"UNEXPECTED_VERIFIER"> {
  readonly verifier: Address;
  readonly trusted: Address;

  constructor(verifier: Address, trusted: Address) {
    super("UNEXPECTED_VERIFIER", `The attestation names the verifier ${verifier}, not the one trusted, ${trusted}: nothing was sent`);
    this.name = "UnexpectedVerifierError";
    this.verifier = verifier;
    this.trusted = trusted;
  }
}

/** The wallet's chain is not the one the attestation's domain names: its verifier is on another chain. */
export class WrongChainError extends AvnError<"WRONG_CHAIN"> {
  readonly walletChainId: bigint;
  readonly attestationChainId: bigint;

  constructor(walletChainId: bigint, attestationChainId: bigint) {
    super("WRONG_CHAIN", `The wallet is on chain ${walletChainId}; the attestation is for the verifier on chain ${attestationChainId}`);
    this.name = "WrongChainError";
    this.walletChainId = walletChainId;
    this.attestationChainId = attestationChainId;
  }
}

/**
 * The attestation would be older than the verifier's `MAX_RECORD_AGE` once mined: `latestBlockTime +
 * marginSeconds > issuedAt + maxRecordAge`. Nothing was sent; a fresh attestation is the remedy. The
 * message starts with the error the contract would have reverted with, with its arguments:
 * `AttestationVerifier_StaleAttestation(issuedAt, maxRecordAge)`.
 */
export class StaleAttestationError extends AvnError<"STALE_ATTESTATION"> {
  /** The attestation's issue time, seconds (chain time). */
  readonly issuedAt: bigint;
  /** The verifier's `MAX_RECORD_AGE`, seconds. */
  readonly maxRecordAge: bigint;
  /** The latest block's timestamp when it was refused. */
  readonly latestBlockTime: bigint;
  /** `recordAttestation`'s `staleMarginSeconds`: the time allowed for the transaction to be mined. */
  readonly marginSeconds: number;

  constructor(fields: { issuedAt: bigint; maxRecordAge: bigint; latestBlockTime: bigint; marginSeconds: number }) {
    const { issuedAt, maxRecordAge, latestBlockTime, marginSeconds } = fields;
    super(
      "STALE_ATTESTATION",
      `AttestationVerifier_StaleAttestation(${issuedAt}, ${maxRecordAge}): issued at ${issuedAt}, the attestation would be older than ` +
        `the verifier's MAX_RECORD_AGE (${maxRecordAge} s) within ${marginSeconds} s of the latest block (time ${latestBlockTime}), ` +
        "and its recording would revert once mined; nothing was sent. Ask the API for a fresh one",
    );
    this.name = "StaleAttestationError";
    this.issuedAt = issuedAt;
    this.maxRecordAge = maxRecordAge;
    this.latestBlockTime = latestBlockTime;
    this.marginSeconds = marginSeconds;
  }
}

/** A signed verdict (condition attestation) given to `recordAttestation`: verdicts are checked in views only. */
export class NotRecordableError extends AvnError<"NOT_RECORDABLE"> {
  constructor() {
    super(
      "NOT_RECORDABLE",
      "Signed verdicts (condition attestations) cannot be recorded: check them with verifyAttestation or in a contract's view",
    );
    this.name = "NotRecordableError";
  }
}

/** The recording was mined and reverted anyway (it passed the simulation a block earlier): the gas it used is spent. */
export class RecordRevertedError extends AvnError<"RECORD_REVERTED"> {
  readonly hash: Hex;
  readonly receipt: TransactionReceipt;
  /** The gas limit sent. */
  readonly gas: bigint;

  constructor(hash: Hex, receipt: TransactionReceipt, gas: bigint) {
    super("RECORD_REVERTED", `recordAttestation ${hash} reverted in block ${receipt.blockNumber} after ${receipt.gasUsed} of ${gas} gas`);
    this.name = "RecordRevertedError";
    this.hash = hash;
    this.receipt = receipt;
    this.gas = gas;
  }
}

/** A transaction `openOrder` sent (the approval or `open`) was mined and reverted after passing its estimate: its gas is spent. */
export class TransactionRevertedError extends AvnError<"TRANSACTION_REVERTED"> {
  readonly hash: Hex;
  readonly receipt: TransactionReceipt;

  constructor(what: string, hash: Hex, receipt: TransactionReceipt) {
    super("TRANSACTION_REVERTED", `${what} ${hash} reverted in block ${receipt.blockNumber}`);
    this.name = "TransactionRevertedError";
    this.hash = hash;
    this.receipt = receipt;
  }
}

/**
 * This runtime's `JSON.parse` gives revivers no source text, so integers above 2^53 cannot be read exactly:
 * the SDK refuses to parse rather than round a balance. The message names the supported runtimes.
 */
export class UnsupportedRuntimeError extends AvnError<"UNSUPPORTED_RUNTIME"> {
  constructor(message: string) {
    super("UNSUPPORTED_RUNTIME", message);
    this.name = "UnsupportedRuntimeError";
  }
}

/*//////////////////////////////////////////////////////////////
                        WHAT EACH CALL THROWS
//////////////////////////////////////////////////////////////*/

/**
 * What `recordAttestation` itself throws. viem's own errors pass through as they are: a transport failure,
 * and a simulation the contract refuses (`ContractFunctionExecutionError`, whose cause names the custom
 * error, e.g. `VerificationRegistry_AttestationNotNewer`).
 */
export type RecordAttestationError =
  | InvalidArgumentError
  | MalformedAttestationError
  | NotRecordableError
  | UnexpectedVerifierError
  | WrongChainError
  | StaleAttestationError
  | RecordRevertedError;

/**
 * What `verifyAttestation` throws: only a refused option. An invalid attestation resolves `valid: false`
 * with a reason; a chain that cannot be asked rejects with viem's transport error.
 */
export type VerifyAttestationError = InvalidArgumentError;

/** What `toContractAttestation`, `attestationTypedData` and `attestationDigest` throw. */
export type ToContractAttestationError = MalformedAttestationError;

/**
 * What `AvnClient` throws: `InvalidArgumentError` from its constructor, `AvnApiError` for any failed call,
 * `UnsupportedRuntimeError` on a runtime that cannot parse exactly. A call aborted by its `signal` rejects
 * with the signal's reason instead.
 */
export type AvnClientError = AvnApiError | InvalidArgumentError | UnsupportedRuntimeError;

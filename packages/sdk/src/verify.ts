import {
  BaseError,
  ContractFunctionRevertedError,
  ContractFunctionZeroDataError,
  createPublicClient,
  hexToBigInt,
  http,
  isAddress,
  isAddressEqual,
  recoverAddress,
  size,
  slice,
  type Address,
  type Client,
} from "viem";
import { getChainId, readContract } from "viem/actions";

import { attestationVerifierAbi } from "./abi.ts";
import { InvalidArgumentError, MalformedAttestationError } from "./errors.ts";
import {
  isAttestationDomain,
  toContractAttestation,
  digestOf,
  type AnyAttestationJson,
  type ContractBalanceAttestationArgs,
  type ContractConditionAttestationArgs,
} from "./typed-data.ts";

/** The default `maxAge`: the verifier's `MAX_RECORD_AGE`, the oldest attestation it records. */
export const DEFAULT_MAX_AGE = 3_600n;

/** `AttestationVerifier.MAX_CLOCK_SKEW`: how far ahead of the clock a view accepts an issue time. */
const MAX_CLOCK_SKEW = 4n;
/** `AttestationVerifier.MAX_LICENSES`. */
const MAX_LICENSES = 16;
const UINT96_MAX = 2n ** 96n - 1n;
/** Half the secp256k1 order: a signature with a larger `s` is the malleable twin the contract refuses. */
const SECP256K1_HALF_N = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n;

export interface VerifyOptions {
  /**
   * The `AttestationVerifier` you trust: the network's, e.g. from its stack file or deployment records. An
   * attestation whose `domain.verifyingContract` is another address (compared case-insensitively) is
   * answered `UnexpectedVerifier` without a call. Without it, the attestation names its own verifier, and
   * `valid` means only "valid under the verifier it names": set it for any attestation that did not come
   * from your own call to the API.
   */
  verifier?: Address;
  /** An L2 JSON-RPC URL: the verifier contract is asked too. */
  rpcUrl?: string;
  /** Or a viem client on the L2 (any client with a transport: public, wallet, test). */
  publicClient?: Client;
  /** Seconds, an integer 0 or more (an `InvalidArgumentError` otherwise). Default `DEFAULT_MAX_AGE` (1 hour). */
  maxAge?: bigint | number;
  /**
   * Off-chain only (no client): the time to judge the age by, in seconds, an integer 0 or more. Default:
   * this computer's clock.
   */
  now?: bigint | number;
}

export interface VerificationResult {
  valid: boolean;
  /**
   * Why not, when not valid: the verifier's custom error (`AttestationVerifier_WrongSigner`,
   * `AttestationVerifier_StaleAttestation`, `AttestationVerifier_QuorumNotReached` …), found off-chain with
   * the contract's own rules or named by the contract's revert; or one of the SDK's: `MalformedAttestation`
   * (the JSON is not an attestation), `UnexpectedVerifier` (`domain.verifyingContract` is not the
   * `verifier` option), `UnsupportedDomain` (not the verifier's EIP-712 name and version),
   * `ChainIdMismatch` (the client is on another chain than the domain's), `NoVerifierContract` (no
   * contract answers at `domain.verifyingContract`), `InvalidWithoutReason` (the contract's boolean view
   * said false, yet its `check…` view named no error).
   */
  reason?: string;
  /** The reason in words, with the error's arguments. */
  detail?: string;
  /** The signers the attestation declares, checksummed, in its order. */
  signers: Address[];
  /** Every license its signatures name, in order. */
  licenseIds: bigint[];
  /**
   * Whether the verifier contract judged it. Off-chain, `valid` means only well formed, fresh by this clock
   * and signed by the signers it declares, who may be anyone: what makes their signatures count is the
   * chain's check that their licenses are live, delegated to them and reach the quorum, so pass `rpcUrl` or
   * `publicClient` (and `verifier`) before trusting one.
   */
  onChain: boolean;
}

/**
 * Checks a balance attestation or a signed verdict, as the API serves them (`data.attestation`). First
 * off-chain, with the contract's rules in the contract's order: each signature 65 bytes with a low `s`,
 * recovering to its declared signer over `Licensed…Attestation` with its own license list; license lists
 * non-empty, distinct, at most 16 in all. Then, given `rpcUrl` or `publicClient`, by the verifier at
 * `domain.verifyingContract` (`isAttestationValid` / `isConditionAttestationValid`, and on `false` the
 * matching `check…` view for the named error), after checking that the client's chain is the domain's.
 *
 * The attestation names its verifier: anyone can sign one with keys of their own and name a contract of
 * their own that answers true. Pass `verifier`, the `AttestationVerifier` you trust, and an attestation
 * naming another is refused (`UnexpectedVerifier`) before any check; without it, `valid` means "valid under
 * the verifier the attestation names", which is enough only for an attestation from your own API call.
 *
 * Resolves with `valid: false` and a `reason` for an invalid attestation; rejects only when the chain
 * cannot be asked (with viem's transport error), so that an outage never reads as "invalid", and throws
 * an `InvalidArgumentError` for an option it refuses (`VerifyAttestationError`): `verifier` not an
 * address, `maxAge` or `now` not an integer of 0 or more. A valid verdict may still say `false`: read
 * `attestation.message.verdict` yourself.
 */
export async function verifyAttestation(attestation: AnyAttestationJson, options: VerifyOptions = {}): Promise<VerificationResult> {
  const maxAge = nonNegativeBigInt(options.maxAge ?? DEFAULT_MAX_AGE, "options.maxAge");
  const now = options.now === undefined ? undefined : nonNegativeBigInt(options.now, "options.now");
  if (options.verifier !== undefined && !isAddress(options.verifier, { strict: false }))
    throw new InvalidArgumentError("options.verifier", `options.verifier must be an address, not ${String(options.verifier)}`);
  let args: ContractBalanceAttestationArgs | ContractConditionAttestationArgs;
  try {
    args = toContractAttestation(attestation);
  } catch (error) {
    // Only the JSON's own faults read as invalid; anything else is a bug, and is thrown.
    if (!(error instanceof MalformedAttestationError)) throw error;
    return { valid: false, reason: "MalformedAttestation", detail: error.message, signers: [], licenseIds: [], onChain: false };
  }
  const signers = args.signatures.map(({ signer }) => signer);
  const licenseIds = args.signatures.flatMap((signature) => signature.licenseIds);
  if (options.verifier !== undefined && !isAddressEqual(options.verifier, args.domain.verifyingContract))
    return {
      valid: false,
      reason: "UnexpectedVerifier",
      detail: `The attestation names the verifier ${args.domain.verifyingContract}, not the one trusted, ${options.verifier}`,
      signers,
      licenseIds,
      onChain: false,
    };
  const client =
    options.publicClient ?? (options.rpcUrl === undefined ? undefined : createPublicClient({ transport: http(options.rpcUrl) }));
  const failure = await offChainFailure(
    args,
    client === undefined ? { maxAge, now: now ?? BigInt(Math.floor(Date.now() / 1000)) } : undefined,
  );
  if (failure !== undefined) return { valid: false, ...failure, signers, licenseIds, onChain: false };
  if (client === undefined) return { valid: true, signers, licenseIds, onChain: false };
  const chainFailure = await onChainFailure(client, args, maxAge);
  return chainFailure === undefined
    ? { valid: true, signers, licenseIds, onChain: true }
    : { valid: false, ...chainFailure, signers, licenseIds, onChain: true };
}

interface Failure {
  reason: string;
  detail: string;
}

/*//////////////////////////////////////////////////////////////
                             OFF-CHAIN
//////////////////////////////////////////////////////////////*/

/**
 * The first rule the attestation breaks that needs no chain, or undefined. `clock` only off-chain: with a
 * chain, the age is the contract's to judge by its block time (the attestation's `issuedAt` is chain time).
 */
async function offChainFailure(
  args: ContractBalanceAttestationArgs | ContractConditionAttestationArgs,
  clock: { maxAge: bigint; now: bigint } | undefined,
): Promise<Failure | undefined> {
  if (!isAttestationDomain(args.domain))
    return {
      reason: "UnsupportedDomain",
      detail: `The domain is "${args.domain.name}" version "${args.domain.version}", not the AttestationVerifier's "Asset Verification Network" version "1"`,
    };
  if (args.kind === "balance" && args.attestation.chain > 1) return named("AttestationVerifier_UnknownChain", args.attestation.chain);
  if (clock !== undefined) {
    const { issuedAt } = args.attestation;
    const age = clock.now > issuedAt ? clock.now - issuedAt : 0n;
    if (age > clock.maxAge) return named("AttestationVerifier_StaleAttestation", issuedAt, clock.maxAge);
    if (issuedAt > clock.now + MAX_CLOCK_SKEW) return named("AttestationVerifier_IssuedInFuture", issuedAt);
  }
  const seen = new Set<bigint>();
  for (const [index, signature] of args.signatures.entries()) {
    const signerFailure = await signatureFailure(args, index);
    if (signerFailure !== undefined) return signerFailure;
    if (signature.licenseIds.length === 0) return named("AttestationVerifier_NoLicenses", index);
    if (seen.size + signature.licenseIds.length > MAX_LICENSES)
      return named("AttestationVerifier_TooManyLicenses", seen.size + signature.licenseIds.length);
    for (const licenseId of signature.licenseIds) {
      // The contract packs each id with its signer into one word: an id of 2^96 or more is never delegated.
      if (licenseId > UINT96_MAX) return named("AttestationVerifier_LicenseNotDelegated", licenseId, signature.signer);
      if (seen.has(licenseId)) return named("AttestationVerifier_DuplicateLicense", licenseId);
      seen.add(licenseId);
    }
  }
  // Some quorum is always needed: no signature can reach it.
  if (args.signatures.length === 0) return named("AttestationVerifier_QuorumNotReached", 0n, "the quorum");
  return undefined;
}

/** Signature `index` checked as OpenZeppelin's `ECDSA.tryRecover` and the verifier check it. */
async function signatureFailure(
  args: ContractBalanceAttestationArgs | ContractConditionAttestationArgs,
  index: number,
): Promise<Failure | undefined> {
  const { signer, licenseIds, signature } = args.signatures[index];
  if (size(signature) !== 65) return named("AttestationVerifier_MalformedSignature", index);
  if (hexToBigInt(slice(signature, 32, 64)) > SECP256K1_HALF_N) return named("AttestationVerifier_MalleableSignature", index);
  // ecrecover returns no address for any other `v`; viem would also take 0 and 1.
  const v = hexToBigInt(slice(signature, 64, 65));
  if (v !== 27n && v !== 28n) return named("AttestationVerifier_MalformedSignature", index);
  let recovered: Address;
  try {
    recovered = await recoverAddress({ hash: digestOf(args, licenseIds), signature });
  } catch {
    return named("AttestationVerifier_MalformedSignature", index);
  }
  if (!isAddressEqual(recovered, signer)) return named("AttestationVerifier_WrongSigner", index, recovered);
  return undefined;
}

/*//////////////////////////////////////////////////////////////
                              ON-CHAIN
//////////////////////////////////////////////////////////////*/

/** The verifier's verdict at the latest block: undefined when valid, else its custom error's name. */
async function onChainFailure(
  client: Client,
  args: ContractBalanceAttestationArgs | ContractConditionAttestationArgs,
  maxAge: bigint,
): Promise<Failure | undefined> {
  const chainId = BigInt(await getChainId(client));
  if (chainId !== args.domain.chainId)
    return {
      reason: "ChainIdMismatch",
      detail: `The client is on chain ${chainId}; the attestation's domain names chain ${args.domain.chainId}`,
    };
  const address = args.domain.verifyingContract;
  try {
    // The boolean view first: a valid attestation costs one call, and an address without code answers
    // no data (a void `check…` call to it would "succeed").
    const valid =
      args.kind === "balance"
        ? await readContract(client, {
            address,
            abi: attestationVerifierAbi,
            functionName: "isAttestationValid",
            args: [args.attestation, args.signatures, maxAge],
          })
        : await readContract(client, {
            address,
            abi: attestationVerifierAbi,
            functionName: "isConditionAttestationValid",
            args: [args.attestation, args.signatures, maxAge],
          });
    if (valid) return undefined;
    if (args.kind === "balance")
      await readContract(client, {
        address,
        abi: attestationVerifierAbi,
        functionName: "checkAttestation",
        args: [args.attestation, args.signatures, maxAge],
      });
    else
      await readContract(client, {
        address,
        abi: attestationVerifierAbi,
        functionName: "checkConditionAttestation",
        args: [args.attestation, args.signatures, maxAge],
      });
    // No named error after a `false`: fail closed. (A heartbeat landing between the calls could make a
    // genuinely valid attestation read so; asking again settles it.)
    return {
      reason: "InvalidWithoutReason",
      detail: `The verifier at ${address} answered false, and its check view named no error`,
    };
  } catch (error) {
    const failure = revertFailure(error);
    if (failure === undefined) throw error;
    return failure;
  }
}

/** The named custom error of a reverted call, or undefined for anything else (a transport error). */
export function revertFailure(error: unknown): Failure | undefined {
  if (!(error instanceof BaseError)) return undefined;
  if (error.walk((cause) => cause instanceof ContractFunctionZeroDataError) !== null)
    return { reason: "NoVerifierContract", detail: "No contract answers at the attestation's verifyingContract on this chain" };
  const reverted = error.walk((cause) => cause instanceof ContractFunctionRevertedError);
  if (!(reverted instanceof ContractFunctionRevertedError)) return undefined;
  const name = reverted.data?.errorName;
  if (name === undefined) return { reason: reverted.signature ?? "Reverted", detail: reverted.shortMessage };
  return { reason: name, detail: `${name}(${(reverted.data?.args ?? []).map(String).join(", ")})` };
}

/** `maxAge` and `now`, seconds: a bigint or a safe integer, 0 or more (`BigInt(1.5)` would throw a bare RangeError). */
function nonNegativeBigInt(value: bigint | number, argument: string): bigint {
  if ((typeof value === "bigint" && value >= 0n) || (Number.isSafeInteger(value) && value >= 0)) return BigInt(value);
  throw new InvalidArgumentError(argument, `${argument} must be an integer, 0 or more, not ${String(value)}`);
}

function named(reason: string, ...args: unknown[]): Failure {
  return { reason, detail: `${reason}(${args.map(String).join(", ")})` };
}

import type { AttestationJson } from "@avn/protocol/attestation-kinds";
import {
  isAddress,
  isAddressEqual,
  type Account,
  type Address,
  type Chain,
  type Client,
  type Hex,
  type TransactionReceipt,
  type Transport,
} from "viem";

import {
  estimateContractGas,
  getBlock,
  getChainId,
  readContract,
  simulateContract,
  waitForTransactionReceipt,
  writeContract,
} from "viem/actions";

import { attestationVerifierAbi } from "./abi.ts";

import {
  InvalidArgumentError,
  NotRecordableError,
  RecordRevertedError,
  StaleAttestationError,
  UnexpectedVerifierError,
  WrongChainError,
} from "./errors.ts";

import { isConditionAttestation, toContractAttestation } from "./typed-data.ts";

export interface RecordOptions {
  /** The sender, when the wallet client has no account of its own. */
  account?: Account | Address;
  /**
   * The `AttestationVerifier` you trust (the network's, e.g. from its stack file or deployment records).
   * An attestation whose `domain.verifyingContract` is another address (compared case-insensitively) is
   * refused with an `UnexpectedVerifierError` before anything is asked or sent. Without it, the transaction
   * goes to the address the attestation names: set it for any attestation that did not come from your own
   * API call.
   */
  verifier?: Address;
  /**
   * Added to the gas estimate, in percent: an integer, 0 or more (an `InvalidArgumentError` otherwise).
   * Default 30, as the circuit nodes and the demo send: unused gas is not charged. See `recordAttestation`
   * for why a bare estimate is not enough.
   */
  gasMarginPercent?: number;
  /**
   * Seconds, an integer 0 or more (an `InvalidArgumentError` otherwise). An attestation that would be older
   * than the verifier's `MAX_RECORD_AGE` this long after the latest block is refused before sending (a
   * `StaleAttestationError`): the simulation at the latest block would pass, and the mined transaction
   * revert `AttestationVerifier_StaleAttestation` a block or more later. Default
   * `DEFAULT_STALE_MARGIN_SECONDS` (30 s: 15 two-second L2 blocks).
   */
  staleMarginSeconds?: number;
  /**
   * How long to wait, at most, for the wallet's RPC to reach a block at or after the attestation's
   * `issuedAt` before simulating (recording refuses an issue time after the block's): an integer, 0 or more
   * (an `InvalidArgumentError` otherwise). Default 10,000 ms.
   */
  waitForIssuedAtMs?: number;
}

export interface RecordResult {
  hash: Hex;
  /** The gas limit sent: the estimate plus the margin. */
  gas: bigint;
  /** The mined transaction's receipt (its status is "success": a revert is thrown, a `RecordRevertedError`). */
  receipt: TransactionReceipt;
}

/** How often the chain's head is read while waiting for it to reach `issuedAt` (2-second L2 blocks). */
const HEAD_POLL_MS = 500;

/** `recordAttestation`'s default `staleMarginSeconds`: 30 s, 15 two-second L2 blocks for the transaction to be mined in. */
export const DEFAULT_STALE_MARGIN_SECONDS = 30;

/**
 * Records a balance attestation with `AttestationVerifier.recordAttestation`, from any viem wallet client
 * on the L2, with no gas override needed:
 *
 * 0. With `verifier`, it refuses an attestation naming another verifier contract (an
 *    `UnexpectedVerifierError`): without it, the transaction goes to whatever `domain.verifyingContract`
 *    says.
 * 1. It checks that the wallet is on the domain's chain (a `WrongChainError` otherwise), and waits
 *    (`waitForIssuedAtMs`) until the wallet's RPC has a block at or after `issuedAt`: the hub stamps the L2
 *    head's time, recording refuses an issue time after the block's (`IssuedInFuture`), and the wallet's
 *    RPC may be a block behind the hub's.
 *    It refuses, with a `StaleAttestationError`, an attestation that will be older than the verifier's
 *    `MAX_RECORD_AGE` by the time the transaction is mined (the latest block's time plus
 *    `staleMarginSeconds`): the simulation at the latest block would still pass it.
 * 2. It simulates the call from the sender, so that a bad attestation (stale, short of quorum, not newer
 *    than the result stored, the sender's collateral short of the fee) rejects with the contract's named
 *    error (viem's `ContractFunctionExecutionError`, whose cause names it) and nothing is sent.
 * 3. It sends with the estimate plus a margin (`gasMarginPercent`). A default wallet sends exactly
 *    `eth_estimateGas`'s figure, made a block before the transaction is mined: the verifier calls into the
 *    verification registry, whose share of the gas left is capped at 63/64 (EIP-150), and estimates of
 *    such nested calls have come out a few hundred gas short (an out-of-gas revert, src/devnet/demo-attest.ts);
 *    and the state the estimate saw can change before mining (a license's fees claimed meanwhile makes
 *    crediting it a fresh storage write). The contract's gas no longer depends on the block's time
 *    (docs/attestations.md, "Gas that does not depend on timing"), so the margin covers what is left.
 * 4. It waits for the receipt and throws a `RecordRevertedError` if the transaction reverted anyway.
 *
 * The sender pays the verification registry's request fee from its collateral there. Signed verdicts
 * (condition attestations) are checked in views only; they cannot be recorded (a `NotRecordableError`).
 *
 * What it throws itself is a `RecordAttestationError`, each with its `code`; viem's errors (the transport,
 * the simulation's `ContractFunctionExecutionError`) pass through as they are.
 */
export async function recordAttestation(
  walletClient: Client<Transport, Chain | undefined, Account | undefined>,
  attestation: AttestationJson,
  options: RecordOptions = {},
): Promise<RecordResult> {
  if (isConditionAttestation(attestation)) throw new NotRecordableError();
  const gasMarginPercent = nonNegativeInteger(options.gasMarginPercent ?? 30, "options.gasMarginPercent");
  const staleMarginSeconds = nonNegativeInteger(options.staleMarginSeconds ?? DEFAULT_STALE_MARGIN_SECONDS, "options.staleMarginSeconds");
  // Checked with the others, before anything is asked: a NaN would never end the wait for `issuedAt`.
  const waitForIssuedAtMs = nonNegativeInteger(options.waitForIssuedAtMs ?? 10_000, "options.waitForIssuedAtMs");
  if (options.verifier !== undefined && !isAddress(options.verifier, { strict: false }))
    throw new InvalidArgumentError("options.verifier", `options.verifier must be an address, not ${String(options.verifier)}`);
  const args = toContractAttestation(attestation);
  const address = args.domain.verifyingContract;
  if (options.verifier !== undefined && !isAddressEqual(options.verifier, address))
    throw new UnexpectedVerifierError(address, options.verifier);
  const account = options.account ?? walletClient.account;
  if (account === undefined) throw new InvalidArgumentError("options.account", "The wallet client has no account: pass options.account");
  const chainId = BigInt(await getChainId(walletClient));
  if (chainId !== args.domain.chainId) throw new WrongChainError(chainId, args.domain.chainId);

  const { issuedAt } = args.attestation;
  const maxRecordAge = await readContract(walletClient, { address, abi: attestationVerifierAbi, functionName: "MAX_RECORD_AGE" });
  const head = await untilHeadReaches(walletClient, issuedAt, waitForIssuedAtMs);
  if (head + BigInt(staleMarginSeconds) > issuedAt + maxRecordAge)
    throw new StaleAttestationError({ issuedAt, maxRecordAge, latestBlockTime: head, marginSeconds: staleMarginSeconds });
  const call = {
    account,
    address,
    abi: attestationVerifierAbi,
    functionName: "recordAttestation",
    args: [args.attestation, args.signatures],
  } as const;
  await simulateContract(walletClient, call);
  const estimate = await estimateContractGas(walletClient, call);
  const gas = estimate + (estimate * BigInt(gasMarginPercent)) / 100n;
  const hash = await writeContract(walletClient, { ...call, gas, chain: walletClient.chain ?? null });
  const receipt = await waitForTransactionReceipt(walletClient, { hash });
  if (receipt.status !== "success") throw new RecordRevertedError(hash, receipt, gas);
  return { hash, gas, receipt };
}

/**
 * Waits until the latest block's timestamp is at least `time`, for at most `timeoutMs`; returns either way,
 * with the latest block's timestamp as last read.
 */
async function untilHeadReaches(client: Client, time: bigint, timeoutMs: number): Promise<bigint> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { timestamp } = await getBlock(client, { blockTag: "latest" });
    if (timestamp >= time || Date.now() >= deadline) return timestamp;
    await new Promise((resolve) => setTimeout(resolve, HEAD_POLL_MS));
  }
}

function nonNegativeInteger(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value < 0)
    throw new InvalidArgumentError(name, `${name} must be an integer, 0 or more, not ${String(value)}`);
  return value;
}

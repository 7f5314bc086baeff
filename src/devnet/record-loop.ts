import type { AttestationJson } from "@avn/protocol/attestation-kinds";
import { getBytes, Interface, Wallet, type InterfaceAbi, type Provider, type TransactionReceipt } from "ethers";

import { AttestationVerifier__factory, NodeRegistry__factory, VerificationRegistry__factory } from "../../typechain-types/index.ts";

import { attestationFromJson } from "../common/attestation.ts";

import { balanceKind } from "@avn/protocol/attestation-kinds";

import { describeError } from "../common/describe-error.ts";

import { postToApi, type DemoQuery } from "./demo-verify.ts";

import type { StackFile } from "../common/stack-file.ts";

/** One `recordAttestation` of the loop, whether it was recorded or not. */
export interface LoopRecording {
  index: number;
  /** Which demo holding: `evm <token> of <owner>` or `svm <mint> of <owner>`. */
  subject: string;
  /** The attestation's issue time (absent when the API gave none). */
  issuedAt?: bigint;
  /** The signing licenses, as the API passed them on. */
  licenseIds: bigint[];
  /** How many node signatures the attestation carried. */
  signatures: number;
  /** The gas limit the wallet sent, which is exactly `eth_estimateGas`'s figure (absent when nothing was sent). */
  estimate?: bigint;
  /** Gas used by the mined transaction (absent when nothing was mined). */
  gasUsed?: bigint;
  /**
   * The transaction's intrinsic gas: 21,000 plus 4 per zero and 16 per non-zero calldata byte. The
   * signatures are random bytes, so this moves by a few dozen gas between recordings of the same subject;
   * `gasUsed - intrinsicGas` is what the contracts spent.
   */
  intrinsicGas?: bigint;
  status: "recorded" | "reverted" | "not sent";
}

export interface LoopFailure {
  index: number;
  subject: string;
  /** The decoded custom error where there is revert data, else a description of what went wrong. */
  reason: string;
}

export interface LoopResult {
  recorded: number;
  failures: LoopFailure[];
  recordings: LoopRecording[];
}

/**
 * Records `count` fresh attestations in a row as the stack's consumer, alternating the first EVM and the
 * first Solana demo holding: each is asked of the API (`?attest=true`) only once the previous recording's
 * receipt is in, and sent by a plain ethers v6 `Wallet` with no override at all, so the gas limit is
 * exactly `eth_estimateGas`'s figure and the fees are ethers' defaults, as any integrator's wallet sends
 * them. A revert, a refused estimate or a failed request is counted as a failure with its reason; the
 * loop goes on.
 *
 * Why every answer is newer than the last one recorded for its subject (the registry refuses one that is
 * not): the hub stamps `issuedAt` with the L2 head's timestamp, and recording refuses an `issuedAt` after
 * the block time, so recording `i` carries `issuedAt_i <= time(block_i)`. Recording `i + 1` (the other
 * subject) is sent only after receipt `i`, so it is mined in a later block, at least 2 s later (2-second
 * L2 blocks); the next answer for the first subject is asked after receipt `i + 1`, when the head is at
 * least `block_{i+1}`, so `issuedAt_{i+2} >= time(block_{i+1}) > time(block_i) >= issuedAt_i`. That holds
 * even if the hub's head lags ours by a block (it follows new heads over a WebSocket, we poll receipts):
 * it is then at least `block_i`, which came after the head answer `i` was stamped with (`block_i` holds a
 * transaction sent after that answer). One subject alone would have no such margin: the answer asked
 * right after receipt `i` could carry the same head time as answer `i` from a hub one block behind. No
 * wait or retry stands in for this: a `VerificationRegistry_AttestationNotNewer` here is a real failure
 * and is reported as one.
 */
export async function recordInARow(
  stack: StackFile,
  l2: Provider,
  options: { count: number; onEach?: (recording: LoopRecording, failure: LoopFailure | undefined) => void },
): Promise<LoopResult> {
  const evm = stack.demo!.evm[0];
  const svm = stack.demo!.svm[0];
  const holdings: Array<{ subject: string; query: DemoQuery }> = [
    {
      subject: `evm ${evm.contract_address} of ${evm.user_address}`,
      query: { chain: "evm", user_address: evm.user_address, contract_address: evm.contract_address },
    },
    {
      subject: `svm ${svm.token_mint_address} of ${svm.owner_address}`,
      query: { chain: "svm", owner_address: svm.owner_address, token_mint_address: svm.token_mint_address },
    },
  ];
  // A plain wallet: each send reads the pending nonce, which is right because each receipt is awaited.
  const consumer = new Wallet(stack.accounts!.consumer.privateKey, l2);
  const verifier = AttestationVerifier__factory.connect(stack.contracts!.l2!.AttestationVerifier, consumer);

  const result: LoopResult = { recorded: 0, failures: [], recordings: [] };
  for (let index = 0; index < options.count; ++index) {
    const { subject, query } = holdings[index % holdings.length];
    const recording: LoopRecording = { index, subject, licenseIds: [], signatures: 0, status: "not sent" };
    let failure: LoopFailure | undefined;
    try {
      const text = await postToApi(stack, query, "?attest=true");
      const json = (JSON.parse(text) as { data: { attestation?: AttestationJson } }).data.attestation;
      if (json === undefined) throw new Error("the API's answer carries no attestation");
      const { attestation, signatures } = attestationFromJson(balanceKind, json);
      recording.issuedAt = attestation.issuedAt;
      recording.licenseIds = signatures.flatMap(({ licenseIds }) => licenseIds);
      recording.signatures = signatures.length;
      const tx = await verifier.recordAttestation(attestation, signatures);
      recording.estimate = tx.gasLimit;
      recording.intrinsicGas = intrinsicGas(tx.data);
      const receipt = await waitForReceipt(tx.wait());
      recording.gasUsed = receipt.gasUsed;
      if (receipt.status === 1) {
        recording.status = "recorded";
        ++result.recorded;
      } else {
        recording.status = "reverted";
        const outOfGas = receipt.gasUsed === tx.gasLimit ? ", all of it: out of gas" : "";
        failure = {
          index,
          subject,
          reason: `reverted in block ${receipt.blockNumber} after ${receipt.gasUsed} of ${tx.gasLimit} gas${outOfGas}`,
        };
      }
    } catch (error) {
      failure = { index, subject, reason: revertReason(error) };
    }
    if (failure !== undefined) result.failures.push(failure);
    result.recordings.push(recording);
    options.onEach?.(recording, failure);
  }
  return result;
}

/** The receipt, also of a reverted transaction (ethers' `wait` throws for those, with the receipt attached). */
async function waitForReceipt(waiting: Promise<TransactionReceipt | null>): Promise<TransactionReceipt> {
  try {
    const receipt = await waiting;
    if (receipt === null) throw new Error("the transaction has no receipt");
    return receipt;
  } catch (error) {
    const receipt = (error as { receipt?: TransactionReceipt | null }).receipt;
    if (receipt === undefined || receipt === null) throw error;
    return receipt;
  }
}

/** 21,000 plus the calldata's cost (EIP-2028): what a transaction pays before its first opcode. */
export function intrinsicGas(data: string): bigint {
  const bytes = getBytes(data);
  const zeros = bytes.filter((byte) => byte === 0).length;
  return 21_000n + 4n * BigInt(zeros) + 16n * BigInt(bytes.length - zeros);
}

// The errors a recording can revert with: the verifier's own, and those of the registries it calls.
let recordingErrors: Interface | undefined;
function recordingErrorsInterface(): Interface {
  if (recordingErrors === undefined) {
    const errors = new Map<string, unknown>();
    for (const abi of [AttestationVerifier__factory.abi, VerificationRegistry__factory.abi, NodeRegistry__factory.abi]) {
      for (const item of abi as ReadonlyArray<{ type: string; name?: string; inputs?: ReadonlyArray<{ type: string }> }>) {
        if (item.type === "error") errors.set(`${item.name}(${(item.inputs ?? []).map((input) => input.type).join(",")})`, item);
      }
    }
    recordingErrors = new Interface([...errors.values()] as InterfaceAbi);
  }
  return recordingErrors;
}

/** The custom error a refused estimate or call carries, named with its arguments; else the error's description. */
function revertReason(error: unknown): string {
  const data = (error as { data?: unknown }).data ?? (error as { info?: { error?: { data?: unknown } } }).info?.error?.data;
  if (typeof data === "string" && data.length >= 10) {
    try {
      const parsed = recordingErrorsInterface().parseError(data);
      if (parsed !== null) return `${parsed.name}(${parsed.args.join(", ")})`;
    } catch {
      // Not one of these contracts' errors: described below.
    }
  }
  return describeError(error);
}

import type { AttestationJson } from "@avn/protocol/attestation";
import type { Account, Address, Chain, Client, Hex, TransactionReceipt, Transport } from "viem";
import { estimateContractGas, getBlock, getChainId, simulateContract, waitForTransactionReceipt, writeContract } from "viem/actions";

import { attestationVerifierAbi } from "./abi.ts";
import { isConditionAttestation, toContractAttestation } from "./typed-data.ts";

export interface RecordOptions {
  /** The sender, when the wallet client has no account of its own. */
  account?: Account | Address;
  /**
   * Added to the gas estimate, in percent. Default 30, as the circuit nodes and the demo send: unused gas is
   * not charged. See `recordAttestation` for why a bare estimate is not enough.
   */
  gasMarginPercent?: number;
  /**
   * How long to wait, at most, for the wallet's RPC to reach a block at or after the attestation's
   * `issuedAt` before simulating (recording refuses an issue time after the block's). Default 10,000 ms.
   */
  waitForIssuedAtMs?: number;
}

export interface RecordResult {
  hash: Hex;
  /** The gas limit sent: the estimate plus the margin. */
  gas: bigint;
  /** The mined transaction's receipt (its status is "success": a revert is thrown). */
  receipt: TransactionReceipt;
}

/** How often the chain's head is read while waiting for it to reach `issuedAt` (2-second L2 blocks). */
const HEAD_POLL_MS = 500;

/**
 * Records a balance attestation with `AttestationVerifier.recordAttestation`, from any viem wallet client
 * on the L2, with no gas override needed:
 *
 * 1. It checks that the wallet is on the domain's chain, and waits (`waitForIssuedAtMs`) until the wallet's
 *    RPC has a block at or after `issuedAt`: the hub stamps the L2 head's time, recording refuses an
 *    issue time after the block's (`IssuedInFuture`), and the wallet's RPC may be a block behind the hub's.
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
 * 4. It waits for the receipt and throws if the transaction reverted anyway.
 *
 * The sender pays the verification registry's request fee from its collateral there. Signed verdicts
 * (condition attestations) are checked in views only; they cannot be recorded.
 */
export async function recordAttestation(
  walletClient: Client<Transport, Chain | undefined, Account | undefined>,
  attestation: AttestationJson,
  options: RecordOptions = {},
): Promise<RecordResult> {
  if (isConditionAttestation(attestation))
    throw new TypeError(
      "Signed verdicts (condition attestations) cannot be recorded: check them with verifyAttestation or in a contract's view",
    );
  const args = toContractAttestation(attestation);
  const account = options.account ?? walletClient.account;
  if (account === undefined) throw new TypeError("The wallet client has no account: pass options.account");
  const chainId = BigInt(await getChainId(walletClient));
  if (chainId !== args.domain.chainId)
    throw new Error(`The wallet is on chain ${chainId}; the attestation is for the verifier on chain ${args.domain.chainId}`);

  await untilHeadReaches(walletClient, args.attestation.issuedAt, options.waitForIssuedAtMs ?? 10_000);
  const call = {
    account,
    address: args.domain.verifyingContract,
    abi: attestationVerifierAbi,
    functionName: "recordAttestation",
    args: [args.attestation, args.signatures],
  } as const;
  await simulateContract(walletClient, call);
  const estimate = await estimateContractGas(walletClient, call);
  const gas = estimate + (estimate * BigInt(options.gasMarginPercent ?? 30)) / 100n;
  const hash = await writeContract(walletClient, { ...call, gas, chain: walletClient.chain ?? null });
  const receipt = await waitForTransactionReceipt(walletClient, { hash });
  if (receipt.status !== "success")
    throw new Error(`recordAttestation ${hash} reverted in block ${receipt.blockNumber} after ${receipt.gasUsed} of ${gas} gas`);
  return { hash, gas, receipt };
}

/** Waits until the latest block's timestamp is at least `time`, for at most `timeoutMs`; returns either way. */
async function untilHeadReaches(client: Client, time: bigint, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await getBlock(client, { blockTag: "latest" })).timestamp < time && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, HEAD_POLL_MS));
  }
}

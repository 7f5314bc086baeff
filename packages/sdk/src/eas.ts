import type { AttestationJson, ConditionAttestationJson } from "@avn/protocol/attestation-kinds";
import { LICENSED_BALANCE_ATTESTATION_TYPES } from "@avn/protocol/attestation";
import { LICENSED_CONDITION_ATTESTATION_TYPES } from "@avn/protocol/conditions";
import {
  hashStruct,
  isAddress,
  isAddressEqual,
  parseEventLogs,
  zeroHash,
  type Account,
  type Address,
  type Chain,
  type Client,
  type Hex,
  type TransactionReceipt,
  type Transport,
} from "viem";
import { getChainId, readContract, simulateContract, waitForTransactionReceipt, writeContract } from "viem/actions";

import { attestationExporterAbi, attestationVerifierAbi } from "./abi.ts";
import { InvalidArgumentError, TransactionRevertedError, UnexpectedVerifierError, WrongChainError } from "./errors.ts";
import { toContractAttestation, type ContractBalanceAttestationArgs, type ContractConditionAttestationArgs } from "./typed-data.ts";

/** The exporter's ABI with the verifier's errors, so that a refused export names the verifier's reason. */
const exportAbi = [...attestationExporterAbi, ...attestationVerifierAbi.filter((item) => item.type === "error")];

export interface ExportToEasOptions {
  /** A viem wallet client on the L2 (any account, no gas settings needed). */
  walletClient: Client<Transport, Chain | undefined, Account | undefined>;
  /**
   * The `AttestationVerifier` you trust. An attestation that names another (`domain.verifyingContract`, compared
   * case-insensitively) is refused with an `UnexpectedVerifierError` before anything is asked or sent.
   */
  verifier: Address;
  /**
   * The network's `AttestationExporter` (the stack file's `contracts.l2.AttestationExporter`). One that checks
   * with another verifier than `verifier` is refused with an `UnexpectedVerifierError`.
   */
  exporter: Address;
  /** The sender, when the wallet client has no account of its own. */
  account?: Account | Address;
}

export interface ExportToEasResult {
  /** The EAS attestation's UID: `EAS.getAttestation(uid)` on the L2 reads it. */
  uid: Hex;
  /** false when the answer had been exported before: its first UID, and no transaction sent. */
  exported: boolean;
  /** The transaction's hash and receipt, when one was sent. */
  hash?: Hex;
  receipt?: TransactionReceipt;
}

/**
 * Exports a quorum-signed answer (a balance attestation or a signed verdict, as the API returns it with
 * `?attest=true`) to the Ethereum Attestation Service through the network's `AttestationExporter`, and returns
 * its EAS UID. The exporter checks it as the verifier does; the attester is the exporter.
 *
 * 1. It refuses an attestation of another verifier, an exporter of another verifier (`UnexpectedVerifierError`)
 *    and a wallet on another chain (`WrongChainError`), before sending anything.
 * 2. An answer exported before (by anyone) returns its first UID with no transaction (`exported: false`).
 * 3. Otherwise it simulates the export, so that a refused answer (stale, short of quorum) rejects with the
 *    verifier's named error (viem's `ContractFunctionExecutionError`) and nothing is sent; then it sends it with
 *    the wallet's own gas estimate, waits for the receipt and reads the UID from its `AttestationExported` event.
 *    A mined revert is a `TransactionRevertedError`.
 */
export async function exportToEAS(
  attestation: AttestationJson | ConditionAttestationJson,
  options: ExportToEasOptions,
): Promise<ExportToEasResult> {
  const { walletClient } = options;
  for (const name of ["verifier", "exporter"] as const) {
    if (!isAddress(options[name], { strict: false }))
      throw new InvalidArgumentError(`options.${name}`, `options.${name} must be an address, not ${String(options[name])}`);
  }
  const args = toContractAttestation(attestation);
  if (!isAddressEqual(args.domain.verifyingContract, options.verifier))
    throw new UnexpectedVerifierError(args.domain.verifyingContract, options.verifier);
  const account = options.account ?? walletClient.account;
  if (account === undefined) throw new InvalidArgumentError("options.account", "The wallet client has no account: pass options.account");
  const chainId = BigInt(await getChainId(walletClient));
  if (chainId !== args.domain.chainId) throw new WrongChainError(chainId, args.domain.chainId);
  const exporter = options.exporter;
  const exporterVerifier = await readContract(walletClient, { address: exporter, abi: attestationExporterAbi, functionName: "VERIFIER" });
  if (!isAddressEqual(exporterVerifier, options.verifier)) throw new UnexpectedVerifierError(exporterVerifier, options.verifier);

  const answerHash = answerHashOf(args);
  const known = await readContract(walletClient, {
    address: exporter,
    abi: attestationExporterAbi,
    functionName: "uidOf",
    args: [answerHash],
  });
  if (known !== zeroHash) return { uid: known, exported: false };

  const target = { account, address: exporter, abi: exportAbi, chain: walletClient.chain } as const;
  // Simulated first (viem's idiom: the simulation's request is what is sent), each kind with its own function.
  const hash =
    args.kind === "condition"
      ? await writeContract(
          walletClient,
          (
            await simulateContract(walletClient, {
              ...target,
              functionName: "exportConditionAttestation",
              args: [args.attestation, args.signatures],
            })
          ).request,
        )
      : await writeContract(
          walletClient,
          (
            await simulateContract(walletClient, {
              ...target,
              functionName: "exportAttestation",
              args: [args.attestation, args.signatures],
            })
          ).request,
        );
  const receipt = await waitForTransactionReceipt(walletClient, { hash });
  if (receipt.status !== "success") throw new TransactionRevertedError("The export", hash, receipt);
  const event = parseEventLogs({ abi: attestationExporterAbi, eventName: "AttestationExported", logs: receipt.logs }).find(
    (log) => isAddressEqual(log.address, exporter) && log.args.answerHash === answerHash,
  );
  // Another export of the same answer mined first: this one wrote nothing, and the first UID is on record.
  if (event === undefined)
    return {
      uid: await readContract(walletClient, { address: exporter, abi: attestationExporterAbi, functionName: "uidOf", args: [answerHash] }),
      exported: false,
      hash,
      receipt,
    };
  return { uid: event.args.uid, exported: true, hash, receipt };
}

/** The answer's EIP-712 struct hash: the exporter's key for it (`uidOf`). */
function answerHashOf(args: ContractBalanceAttestationArgs | ContractConditionAttestationArgs): Hex {
  return args.kind === "condition"
    ? hashStruct({ data: args.attestation, primaryType: "ConditionAttestation", types: LICENSED_CONDITION_ATTESTATION_TYPES })
    : hashStruct({ data: args.attestation, primaryType: "BalanceAttestation", types: LICENSED_BALANCE_ATTESTATION_TYPES });
}

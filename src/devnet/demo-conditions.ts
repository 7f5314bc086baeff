import type { ConditionAttestationJson } from "@avn/protocol/attestation-kinds";
import { NonceManager, Wallet, type Provider } from "ethers";

import { AttestationVerifier__factory, GameItem__factory } from "../../typechain-types/index.ts";

import { attestationFromJson } from "../common/attestation.ts";

import { conditionKind } from "@avn/protocol/attestation-kinds";

import { conditionHash, type ConditionAttestation } from "@avn/protocol/conditions";
import type { NodeSignature } from "@avn/protocol/attestation";

import { eventArgs } from "./events.ts";

import { solanaBytes32 } from "./demo-verify.ts";

import type { StackFile } from "../common/stack-file.ts";

/** The age a verdict may have for the demo's checks, in seconds. */
const MAX_AGE = 3_600n;

export interface EvaluatedCondition {
  verdict: boolean;
  conditionHash: string;
  ownersHash: string;
  /** How many leaves the answer lists (undefined with `reveal: false`). */
  leaves: number | undefined;
  /** From sending the request to reading the answer. */
  ms: number;
  /** With `attest`: the quorum-signed verdict, and what the deployed verifier's view says of it. */
  signed?: { attestation: ConditionAttestation; signatures: NodeSignature[]; valid: boolean };
}

/**
 * Asks the stack's API for a verdict (`POST /api/conditions`, `?attest=true` when `attest`) with the demo
 * key, and checks a signed one with the deployed verifier's view: what `npm run demo:verify` prints and
 * the end-to-end tests assert for every demo condition.
 */
export async function evaluateDemoCondition(
  stack: StackFile,
  l2: Provider,
  request: Record<string, unknown>,
  attest: boolean,
): Promise<EvaluatedCondition> {
  const started = performance.now();
  const response = await fetch(`${stack.api!.baseUrl}/api/conditions${attest ? "?attest=true" : ""}`, {
    method: "POST",
    headers: { authorization: stack.api!.apiKey, "content-type": "application/json" },
    body: JSON.stringify(request),
  });
  const text = await response.text();
  const ms = performance.now() - started;
  if (response.status !== 200) throw new Error(`the API answered ${response.status}: ${text}`);
  // Balances in `leaves` may exceed 2^53; nothing read here is one of them.
  const { data } = JSON.parse(text) as {
    data: { verdict: boolean; conditionHash: string; ownersHash: string; leaves?: unknown[]; attestation?: ConditionAttestationJson };
  };
  const evaluated: EvaluatedCondition = {
    verdict: data.verdict,
    conditionHash: data.conditionHash,
    ownersHash: data.ownersHash,
    leaves: data.leaves?.length,
    ms,
  };
  if (!attest) return evaluated;
  if (data.attestation === undefined) throw new Error("the API's answer carries no attestation");
  const { attestation, signatures } = attestationFromJson(conditionKind, data.attestation);
  const verifier = AttestationVerifier__factory.connect(stack.contracts!.l2!.AttestationVerifier, l2);
  const valid = await verifier.isConditionAttestationValid(attestation, signatures, MAX_AGE);
  return { ...evaluated, signed: { attestation, signatures, valid } };
}

/**
 * The example game's third path: the demo collector asks for a signed verdict on the game's condition
 * (its Ethereum wallet, and the Solana wallet linked to it) and claims an item with it, from a default
 * ethers wallet (its own gas estimate, no override).
 */
export async function claimItemWithVerdict(
  stack: StackFile,
  l2: Provider,
): Promise<{ tokenId: bigint; gasUsed: bigint; solanaOwner: string; verdictMs: number }> {
  const collector = new NonceManager(new Wallet(stack.accounts!.demoCollector.privateKey, l2));
  const game = GameItem__factory.connect(stack.contracts!.l2!.GameItem, collector);
  const wanted = (await game.CONDITION_HASH()).toLowerCase();
  const gameCondition = (stack.demo?.conditions ?? []).find((condition) => conditionHash(condition.request.condition) === wanted);
  if (gameCondition === undefined) throw new Error(`no demo condition of the stack file has the game's hash ${wanted}`);
  const evaluated = await evaluateDemoCondition(stack, l2, gameCondition.request, true);
  const solana = (gameCondition.request.owners as { solana?: string }).solana;
  const solanaOwner = solana === undefined ? `0x${"0".repeat(64)}` : solanaBytes32(solana);
  const { attestation, signatures } = evaluated.signed!;
  const receipt = await (await game.claimWithCondition(attestation, signatures, solanaOwner)).wait();
  const claimed = eventArgs(receipt, "ItemClaimedWithCondition");
  return { tokenId: claimed.tokenId as bigint, gasUsed: receipt!.gasUsed, solanaOwner, verdictMs: evaluated.ms };
}
